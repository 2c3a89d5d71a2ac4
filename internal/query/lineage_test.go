package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/synth"
)

// lineageStore ingests each file under each policy, in order, into a fresh
// store, and checks the store's consistency when the test ends.
func lineageStore(t testing.TB, files []string, policies ...*normalize.Policy) *graph.Store {
	t.Helper()
	return ingestStore(t, files, false, policies...)
}

// noViewStore is lineageStore without a grouping view (ingest --no-view):
// lineages are then computed from the quads' neighbourhood.
func noViewStore(t testing.TB, files []string, policies ...*normalize.Policy) *graph.Store {
	t.Helper()
	return ingestStore(t, files, true, policies...)
}

func ingestStore(t testing.TB, files []string, noView bool, policies ...*normalize.Policy) *graph.Store {
	t.Helper()
	st, err := graph.Open(filepath.Join(t.TempDir(), "lineage.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Check(context.Background()); err != nil {
			t.Errorf("store check: %v", err)
		}
		st.Close()
	})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	for _, p := range policies {
		for _, f := range files {
			if _, err := ingest.File(context.Background(), st, f, filepath.Base(f), ingest.Options{Policy: p, Now: clock, NoView: noView}); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st
}

const exampleCitations = "../../testdata/citations.jsonl"

func exampleStore(t testing.TB) *graph.Store {
	return lineageStore(t, []string{exampleCitations}, normalize.Default())
}

func writeJSONL(t testing.TB, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "extra.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// lineageSummary is what the table tests compare: every part of a lineage
// in a form that reads well in a failure message.
type lineageSummary struct {
	Engine, Answer, Observed string
	Fragment                 string // "(none)" when nil
	Base                     string
	Rules                    []string
	Key, Error, Removed      string
	Hops                     []string // "301 from -> to at T [crosses host]"
	Resolved                 string
	Hashes                   []string
	Canonicals               []string // "url (source)"
	Relations                []string // "type target evidence format captured"
	Verdict                  string
	Members                  int
	Reasons                  []string // prefixes of the member's reasons
	Ungrouped                string   // prefix
}

func summarize(l *query.Lineage) lineageSummary {
	s := lineageSummary{
		Engine: l.Engine, Answer: l.AnswerID + "#" + string(l.Position), Observed: l.ObservedAt,
		Fragment: "(none)", Base: l.BaseURL, Key: l.Key, Resolved: l.ResolvedURL, Hashes: l.ContentHashes,
	}
	if l.Fragment != nil {
		s.Fragment = *l.Fragment
	}
	if n := l.Normalization; n != nil {
		for _, st := range n.Steps {
			s.Rules = append(s.Rules, string(st.Rule))
		}
		if n.Error != nil {
			s.Error = n.Error.Code
		}
		s.Removed = strings.Join(n.RemovedParams, "&")
	}
	for _, r := range l.Retrievals {
		for _, h := range r.Hops {
			hop := fmt.Sprintf("%s %s -> %s at %s", h.Status, h.From, h.To, h.At)
			if h.CrossesHost {
				hop += " [crosses host]"
			}
			s.Hops = append(s.Hops, hop)
		}
		for _, c := range r.Canonicals {
			s.Canonicals = append(s.Canonicals, c.URL+" ("+c.Source+")")
		}
	}
	for _, r := range l.Relations {
		s.Relations = append(s.Relations, strings.TrimSpace(strings.Join([]string{r.Type, r.Target, r.Evidence, r.Format, r.CapturedAt}, " ")))
	}
	if g := l.Group; g != nil {
		s.Verdict, s.Members, s.Reasons = g.Verdict, g.Members, g.Reasons
	}
	s.Ungrouped = l.Ungrouped
	return s
}

// matches compares a summary with a wanted one; Reasons and Ungrouped in
// want are prefixes, and a nil Hashes means none.
func (s lineageSummary) matches(want lineageSummary) bool {
	if len(s.Reasons) != len(want.Reasons) {
		return false
	}
	for i := range want.Reasons {
		if !strings.HasPrefix(s.Reasons[i], want.Reasons[i]) {
			return false
		}
	}
	if !strings.HasPrefix(s.Ungrouped, want.Ungrouped) || (want.Ungrouped == "") != (s.Ungrouped == "") {
		return false
	}
	if want.Hashes == nil {
		want.Hashes = []string{}
	}
	s.Reasons, want.Reasons = nil, nil
	s.Ungrouped, want.Ungrouped = "", ""
	return reflect.DeepEqual(s, want)
}

var lineageTests = []struct {
	id   string // or, with byURL, the raw URL
	want lineageSummary
}{
	{
		// A redirect chain whose second hop crosses host, with a content
		// hash: a single member is never identity-confirmed (issue 14).
		id: "gpt-17-2",
		want: lineageSummary{
			Engine: "chatgpt", Answer: "gpt-17#2", Observed: "2026-11-02T10:02:11+01:00", Fragment: "(none)",
			Key: "http://w3.org/TR/prov-o",
			Hops: []string{
				"301 http://w3.org/TR/prov-o -> https://w3.org/TR/prov-o at 2026-11-02T10:05:02+01:00",
				"301 https://w3.org/TR/prov-o -> https://www.w3.org/TR/prov-o/ at 2026-11-02T10:05:02+01:00 [crosses host]",
			},
			Resolved: "https://www.w3.org/TR/prov-o/",
			Hashes:   []string{"sha256:1111111111111111111111111111111111111111111111111111111111111111"},
			Verdict:  model.VerdictNormalizedCompare, Members: 1,
			Reasons: []string{"key http://w3.org/TR/prov-o under policy provgraph-default@", "content hash sha256:1111"},
		},
	},
	{
		// A tracking parameter and a fragment removed; the same key and
		// content hash as gpt-17-1.
		id: "pplx-001-2",
		want: lineageSummary{
			Engine: "perplexity", Answer: "pplx-001#2", Observed: "2026-11-02T09:15:00Z", Fragment: "description",
			Rules: []string{"drop-fragment", "tracking-params"}, Key: "https://www.w3.org/TR/prov-o/", Removed: "utm_source=perplexity",
			Resolved: "https://www.w3.org/TR/prov-o/",
			Hashes:   []string{"sha256:1111111111111111111111111111111111111111111111111111111111111111"},
			Verdict:  model.VerdictIdentityConfirmed, Members: 2,
			Reasons: []string{"key https://www.w3.org/TR/prov-o/ under policy", "rules applied: drop-fragment, tracking-params",
				"tracking parameters removed: utm_source=perplexity", "content hash sha256:1111", "identity confirmed: content hash equal"},
		},
	},
	{
		// Two canonical declarations, one of them to another host, kept as
		// observed with their sources.
		id: "gem-5-2",
		want: lineageSummary{
			Engine: "gemini", Answer: "gem-5#2", Observed: "2026-11-03T14:00:00Z", Fragment: "(none)",
			Key: "https://www.example.com/news/2026/story.html", Resolved: "https://www.example.com/news/2026/story.html",
			Canonicals: []string{"https://www.example.com/news/2026/story.html (html-link)", "https://example.com/news/story (http-link-header)"},
			Verdict:    model.VerdictNormalizedCompare, Members: 1,
			Reasons: []string{"key https://www.example.com/news/2026/story.html under policy"},
		},
	},
	{
		// A declared format relation.
		id: "gem-5-3",
		want: lineageSummary{
			Engine: "gemini", Answer: "gem-5#3", Observed: "2026-11-03T14:00:00Z", Fragment: "(none)",
			Key:       "https://www.example.com/news/2026/story.html?print=1",
			Relations: []string{"format_of https://www.example.com/news/2026/story.html declared print"},
			Verdict:   model.VerdictNormalizedCompare, Members: 1,
			Reasons: []string{"key https://www.example.com/news/2026/story.html?print=1 under policy"},
		},
	},
	{
		// An AMP cache URL: the relation is detected from the URL itself.
		id: "gem-5-1",
		want: lineageSummary{
			Engine: "gemini", Answer: "gem-5#1", Observed: "2026-11-03T14:00:00Z", Fragment: "(none)",
			Key:       "https://www-example-com.cdn.ampproject.org/c/s/www.example.com/news/2026/story.amp.html",
			Relations: []string{"format_of https://www.example.com/news/2026/story.amp.html detected amp"},
			Verdict:   model.VerdictNormalizedCompare, Members: 1,
			Reasons: []string{"key https://www-example-com.cdn.ampproject.org/"},
		},
	},
	{
		// A Wayback Machine snapshot, with its capture time.
		id: "cop-9-1",
		want: lineageSummary{
			Engine: "copilot", Answer: "cop-9#1", Observed: "2026-11-04T08:30:00Z", Fragment: "(none)",
			Key:       "https://web.archive.org/web/20240115083000/https://example.test/report?id=3",
			Relations: []string{"archive_of https://example.test/report?id=3 detected  2024-01-15T08:30:00Z"},
			Verdict:   model.VerdictNormalizedCompare, Members: 1,
			Reasons: []string{"key https://web.archive.org/"},
		},
	},
	{
		// A raw URL the policy rejects: stored and reported with its error,
		// never grouped.
		id: "pplx-002-3",
		want: lineageSummary{
			Engine: "perplexity", Answer: "pplx-002#3", Observed: "2026-11-05T11:00:00Z", Fragment: "(none)",
			Error: "userinfo", Ungrouped: "the policy rejected the raw URL (userinfo)",
		},
	},
	{
		// A relative raw URL resolved against its base URL; the fragment
		// is the raw URL's own.
		id: "../guide/install#linux",
		want: lineageSummary{
			Engine: "gemini", Answer: "gem-6#1", Observed: "2026-11-06T16:45:00Z", Fragment: "linux",
			Base:  "https://docs.example.test/en/latest/faq/",
			Rules: []string{"resolve-reference", "dot-segments", "drop-fragment"},
			Key:   "https://docs.example.test/en/latest/guide/install", Verdict: model.VerdictNormalizedCompare, Members: 1,
			Reasons: []string{"key https://docs.example.test/en/latest/guide/install under policy", "rules applied: resolve-reference, dot-segments, drop-fragment"},
		},
	},
}

func TestLineageOf(t *testing.T) {
	viewed := exampleStore(t)
	bare := noViewStore(t, []string{exampleCitations}, normalize.Default())
	ctx := context.Background()
	for _, tt := range lineageTests {
		for _, sc := range []struct {
			st          *graph.Store
			scope, want string
		}{
			{viewed, query.ScopeNeighbourhood, query.ScopeView},
			{bare, query.ScopeNeighbourhood, query.ScopeNeighbourhood},
			{viewed, query.ScopeDatabase, query.ScopeDatabase},
		} {
			st, scope := sc.st, sc.scope
			opts := &query.LineageOptions{Scope: scope}
			var l *query.Lineage
			if strings.Contains(tt.id, "/") {
				ls, err := query.LineageOfURL(ctx, citestore.New(st), tt.id, opts)
				if err != nil || len(ls) != 1 {
					t.Fatalf("LineageOfURL(%q) = %d lineages, %v; want 1", tt.id, len(ls), err)
				}
				l = ls[0]
			} else {
				var err error
				if l, err = query.LineageOf(ctx, citestore.New(st), tt.id, opts); err != nil {
					t.Fatalf("LineageOf(%q): %v", tt.id, err)
				}
				if l.CitationID != tt.id {
					t.Errorf("LineageOf(%q).CitationID = %q", tt.id, l.CitationID)
				}
			}
			if got := summarize(l); !got.matches(tt.want) {
				t.Errorf("LineageOf(%q), scope %s =\n%+v\nwant\n%+v", tt.id, scope, got, tt.want)
			}
			if l.Policy.Name != "provgraph-default" || !slices.Equal(l.NormalizedUnder, []string{l.Policy.String()}) {
				t.Errorf("LineageOf(%q): policy %v, normalized under %v", tt.id, l.Policy, l.NormalizedUnder)
			}
			if l.Group != nil && (l.Group.Scope != sc.want || l.Group.Read < l.Group.Members) {
				t.Errorf("LineageOf(%q), scope %s: group scope %q (want %q), %d citations read for %d members", tt.id, scope, l.Group.Scope, sc.want, l.Group.Read, l.Group.Members)
			}
		}
	}
}

func TestLineageOfURLIsExact(t *testing.T) {
	// Three citations of one raw URL, and one of a URL with the same key.
	extra := writeJSONL(t,
		`{"citation_id":"x-2","engine":"claude","answer_id":"x","position":2,"observed_at":"2026-12-01T10:00:00Z","raw_url":"https://Example.org/a?utm_source=x#top"}`,
		`{"citation_id":"x-1","engine":"claude","answer_id":"x","position":1,"observed_at":"2026-12-01T10:00:00Z","raw_url":"https://Example.org/a?utm_source=x#top"}`,
		`{"citation_id":"y-1","engine":"copilot","answer_id":"y","position":1,"observed_at":"2026-12-01T11:00:00Z","raw_url":"https://Example.org/a?utm_source=x#top","retrieval":{"final_url":"https://example.org/a","final_status":200}}`,
		`{"citation_id":"z-1","engine":"copilot","answer_id":"z","position":1,"observed_at":"2026-12-01T11:00:00Z","raw_url":"https://example.org/a"}`,
	)
	st := lineageStore(t, []string{exampleCitations, extra}, normalize.Default())
	ctx := context.Background()
	ls, err := query.LineageOfURL(ctx, citestore.New(st), "https://Example.org/a?utm_source=x#top", nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, l := range ls {
		ids = append(ids, l.CitationID)
		if l.Key != "https://example.org/a" || l.Group == nil || l.Group.Members != 4 || *l.Fragment != "top" {
			t.Errorf("lineage of %s: key %q, group %+v", l.CitationID, l.Key, l.Group)
		}
	}
	if want := []string{"x-1", "x-2", "y-1"}; !slices.Equal(ids, want) {
		t.Errorf("LineageOfURL: citations %v, want %v (sorted, exact raw text only)", ids, want)
	}
	for _, raw := range []string{
		"https://example.org/a?utm_source=x#top", // differs in case only: another raw URL
		"https://Example.org/a?utm_source=x",
		"https://www.w3.org/TR/prov-o/", // a key and a resolved URL, never a raw URL
		"",
	} {
		if ls, err := query.LineageOfURL(ctx, citestore.New(st), raw, nil); !errors.Is(err, query.ErrNoCitation) || ls != nil {
			t.Errorf("LineageOfURL(%q) = %d lineages, %v; want ErrNoCitation", raw, len(ls), err)
		}
	}
	if _, err := query.LineageOf(ctx, citestore.New(st), "no-such-id", nil); !errors.Is(err, query.ErrNoCitation) || !strings.Contains(err.Error(), `"no-such-id"`) {
		t.Errorf("LineageOf(unknown id) error = %v, want ErrNoCitation naming the id", err)
	}
}

func TestLineagePolicies(t *testing.T) {
	st := lineageStore(t, []string{exampleCitations}, normalize.Default(), normalize.Lenient())
	ctx := context.Background()
	for _, tt := range []struct {
		policy    string
		wantName  string
		wantError string // rejection code under the policy
	}{
		{"", "provgraph-lenient", ""}, // the latest run's
		{"provgraph-default", "provgraph-default", "userinfo"},
		{normalize.Default().Name() + "@2026.11.1", "provgraph-default", "userinfo"},
		{normalize.Lenient().Digest(), "provgraph-lenient", ""},
	} {
		l, err := query.LineageOf(ctx, citestore.New(st), "pplx-002-3", &query.LineageOptions{Policy: tt.policy})
		if err != nil {
			t.Fatalf("LineageOf(pplx-002-3, policy %q): %v", tt.policy, err)
		}
		code := ""
		if l.Normalization != nil && l.Normalization.Error != nil {
			code = l.Normalization.Error.Code
		}
		if l.Policy.Name != tt.wantName || code != tt.wantError || (code == "") != (l.Group != nil) || len(l.NormalizedUnder) != 2 {
			t.Errorf("LineageOf(pplx-002-3, policy %q): policy %s, error %q, group %v, normalized under %v; want %s, %q",
				tt.policy, l.Policy, code, l.Group, l.NormalizedUnder, tt.wantName, tt.wantError)
		}
	}
	if _, err := query.LineageOf(ctx, citestore.New(st), "pplx-002-3", &query.LineageOptions{Policy: "nope@1"}); !errors.Is(err, query.ErrNoPolicy) {
		t.Errorf("LineageOf with an unknown policy: %v, want ErrNoPolicy", err)
	}
	// A citation never normalized under the policy asked for.
	only := lineageStore(t, []string{writeJSONL(t, `{"citation_id":"l-1","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://a.test/"}`)}, normalize.Lenient())
	extra := writeJSONL(t, `{"citation_id":"d-1","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://b.test/"}`)
	if _, err := ingest.File(ctx, only, extra, "extra", ingest.Options{Policy: normalize.Default()}); err != nil {
		t.Fatal(err)
	}
	l, err := query.LineageOf(ctx, citestore.New(only), "l-1", &query.LineageOptions{Policy: "provgraph-default"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Normalization != nil || l.Group != nil || !strings.HasPrefix(l.Ungrouped, "never normalized") || len(l.NormalizedUnder) != 1 {
		t.Errorf("lineage under a policy never applied to it: %+v", l)
	}
}

// TestLineageReadsOnly: lineage changes nothing in the store, in any scope.
// TestLineageNeighbourhoodReadsThePolicysKeys: a neighbourhood reads the
// citations whose key is the group's under the policy shown, not those
// whose key under another policy has the same text (s-1's key under the
// host rules is s-2's key under the default policy; under the default it
// is a group of its own, which the lineage of s-2 does not need).
func TestLineageNeighbourhoodReadsThePolicysKeys(t *testing.T) {
	hostRules, err := normalize.LoadPolicy("testdata/hostrules.toml")
	if err != nil {
		t.Fatal(err)
	}
	st := lineageStore(t, []string{writeJSONL(t,
		`{"citation_id":"s-1","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://shop.example.test/p?ref=x"}`,
		`{"citation_id":"s-2","observed_at":"2026-12-01T10:00:00Z","raw_url":"https://shop.example.test/p"}`,
	)}, normalize.Default(), hostRules)
	for _, tt := range []struct {
		policy  string
		members int
	}{{"provgraph-default", 1}, {"test-groups-hostrules", 2}} {
		l, err := query.LineageOf(context.Background(), citestore.New(st), "s-2", &query.LineageOptions{Policy: tt.policy})
		if err != nil {
			t.Fatal(err)
		}
		if l.Group == nil || l.Group.Members != tt.members || l.Group.Read != tt.members {
			t.Errorf("lineage of s-2 under %s: group %+v; want %d members, %d citations read", tt.policy, l.Group, tt.members, tt.members)
		}
	}
}

func TestLineageReadsOnly(t *testing.T) {
	st := exampleStore(t)
	ctx := context.Background()
	before, n := dumpStore(t, st)
	for _, scope := range []string{query.ScopeNeighbourhood, query.ScopeDatabase} {
		opts := &query.LineageOptions{Scope: scope}
		for _, tt := range lineageTests {
			if _, err := query.LineageOf(ctx, citestore.New(st), tt.id, opts); err != nil && !errors.Is(err, query.ErrNoCitation) {
				t.Fatal(err)
			}
			if _, err := query.LineageOfURL(ctx, citestore.New(st), tt.id, opts); err != nil && !errors.Is(err, query.ErrNoCitation) {
				t.Fatal(err)
			}
		}
	}
	after, m := dumpStore(t, st)
	if n != m || !bytes.Equal(before, after) {
		t.Errorf("lineage changed the store: %d quads before, %d after", n, m)
	}
}

func dumpStore(t testing.TB, st *graph.Store) ([]byte, int64) {
	t.Helper()
	n, err := st.Count()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	err = st.Match(context.Background(), graph.Quad{}, func(q graph.Quad) error {
		lines = append(lines, string(graph.AppendNQuad(nil, q)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return []byte(strings.Join(lines, "")), n
}

// TestLineageScopesAgree checks the neighbourhood group against Groups over
// the whole database, for every citation. On the example they must agree
// exactly. On synthetic data the neighbourhood may miss a same-host
// redirect into the group that ends at a URL written differently from its
// key (see query.ScopeNeighbourhood): any difference must involve a group
// joined by a redirect, and there must be no more than the known ones.
func TestLineageScopesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("ingests 3,000 synthetic citations; skipped with -short")
	}
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 3, Sites: 30}).Write(&b, 1200); err != nil {
		t.Fatal(err)
	}
	synthetic := filepath.Join(t.TempDir(), "synth.jsonl")
	if err := os.WriteFile(synthetic, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		file     string
		view     bool
		maxDiffs int
	}{
		{"example", exampleCitations, false, 0},
		// Two citations of one group whose source redirects from
		// http://.../?lang=fr to https://.../ (no query): that source's key
		// is no http/https or slash variant of the target's, and the final
		// URL is not written as the key.
		{"synthetic", synthetic, false, 2},
		// Read from the grouping view, the group is the full report's,
		// relations included.
		{"example, view", exampleCitations, true, 0},
		{"synthetic, view", synthetic, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := noViewStore(t, []string{tc.file}, normalize.Default())
			wantScope := query.ScopeNeighbourhood
			if tc.view {
				st, wantScope = lineageStore(t, []string{tc.file}, normalize.Default()), query.ScopeView
			}
			ctx := context.Background()
			snap, err := query.Load(ctx, citestore.New(st), "")
			if err != nil {
				t.Fatal(err)
			}
			rep := query.Groups(snap, query.GroupOptions{})
			type place struct {
				group   *query.Group
				reasons []string
			}
			want := map[string]place{}
			for _, g := range rep.Groups {
				for _, m := range g.Members {
					want[m.CitationID] = place{g, m.Reasons}
				}
			}
			diffs, joined := 0, 0
			for _, c := range snap.Citations {
				l, err := query.LineageOf(ctx, citestore.New(st), c.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				w, ok := want[c.ID]
				if !ok {
					if l.Group != nil {
						t.Errorf("%s: neighbourhood group %s, but Groups places it in none", c.ID, l.Group.ID)
					}
					continue
				}
				if w.group.Keys != nil {
					joined++
				}
				g := l.Group
				if g != nil && g.Scope != wantScope {
					t.Fatalf("%s: group scope %q, want %q", c.ID, g.Scope, wantScope)
				}
				if tc.view && g != nil && jsonText(g.Relations) != jsonText(w.group.Relations) {
					t.Errorf("%s: group %s from the view has relations %s, the full report %s", c.ID, g.ID, jsonText(g.Relations), jsonText(w.group.Relations))
				}
				if g != nil && g.ID == w.group.ID && g.Verdict == w.group.Verdict && g.Members == len(w.group.Members) &&
					slices.Equal(g.Keys, w.group.Keys) && slices.Equal(g.Reasons, w.reasons) {
					continue
				}
				diffs++
				t.Logf("%s: neighbourhood group %+v, Groups over the database %s joining keys %v", c.ID, g, w.group.ID, w.group.Keys)
				if g == nil || (g.Keys == nil && w.group.Keys == nil) {
					t.Errorf("%s: neighbourhood group %+v, Groups over the database %s %s %d members %v %v: a difference without a redirect join",
						c.ID, g, w.group.ID, w.group.Verdict, len(w.group.Members), w.group.Keys, w.reasons)
				}
			}
			t.Logf("%d citations, %d in groups joined by redirects, %d placed differently by the neighbourhood", len(snap.Citations), joined, diffs)
			if diffs > tc.maxDiffs {
				t.Errorf("%d citations placed differently, want at most %d", diffs, tc.maxDiffs)
			}
		})
	}
}

func BenchmarkLineageOf(b *testing.B) {
	st := exampleStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := query.LineageOf(ctx, citestore.New(st), "gpt-17-2", nil); err != nil {
			b.Fatal(err)
		}
	}
}

func ExampleLineageOf() {
	dir, err := os.MkdirTemp("", "lineage-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	st, err := graph.Open(filepath.Join(dir, "example.db"), nil)
	if err != nil {
		panic(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := ingest.File(ctx, st, exampleCitations, "citations.jsonl", ingest.Options{Policy: normalize.Default()}); err != nil {
		panic(err)
	}
	l, err := query.LineageOf(ctx, citestore.New(st), "gpt-17-2", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("raw:", l.RawURL, "key:", l.Key)
	for _, h := range l.Retrievals[0].Hops {
		fmt.Println("hop:", h.Status, h.From, "->", h.To, "crosses host:", h.CrossesHost)
	}
	fmt.Println("resolved:", l.ResolvedURL)
	fmt.Println("group:", l.Group.Verdict, l.Group.Members, "member")
	// Output:
	// raw: http://w3.org/TR/prov-o key: http://w3.org/TR/prov-o
	// hop: 301 http://w3.org/TR/prov-o -> https://w3.org/TR/prov-o crosses host: false
	// hop: 301 https://w3.org/TR/prov-o -> https://www.w3.org/TR/prov-o/ crosses host: true
	// resolved: https://www.w3.org/TR/prov-o/
	// group: normalized-compare 1 member
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
