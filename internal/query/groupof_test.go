package query_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/store"
)

// scanView is a grouping view (query.GroupView) made from a scan of a
// store and its snapshot, as a backend keeps one at ingest: the rows of
// every keyed citation by key, and postings from evidence and from the
// keys of the URLs a citation redirects or points to. Citations are read
// through the store's own Lookup. It counts the keys read.
type scanView struct {
	*citestore.Store
	digest                    string
	rows                      map[string][]query.ViewRow
	ids, redirects, relations map[string][]string
	contents, digests         map[string][]string
	blocks                    map[[2]uint64][]string
	keyReads                  int
}

func newScanView(t testing.TB, st *graph.Store) *scanView {
	t.Helper()
	ctx := context.Background()
	cs := citestore.New(st)
	snap, err := query.Load(ctx, cs, "")
	if err != nil {
		t.Fatal(err)
	}
	norm, err := snap.Normalizer()
	if err != nil {
		t.Fatal(err)
	}
	keyOf := func(u string) string {
		r, err := norm.Normalize(u)
		if err != nil {
			return ""
		}
		return r.Key
	}
	v := &scanView{Store: cs, digest: snap.Policy.Digest, rows: map[string][]query.ViewRow{},
		ids: map[string][]string{}, redirects: map[string][]string{}, relations: map[string][]string{},
		contents: map[string][]string{}, digests: map[string][]string{}, blocks: map[[2]uint64][]string{}}
	post := func(m map[string][]string, k, key string) {
		if k != "" && !slices.Contains(m[k], key) {
			m[k] = append(m[k], key)
		}
	}
	// The scan's handles are resolved once it has returned.
	type scanned struct {
		id               string
		key              store.Handle
		content, related bool
		redirects        []store.Handle
		evidence         []store.Evidence
	}
	var rows []scanned
	texts, err := cs.Scan(ctx, v.digest, store.FieldKey|store.FieldFinalURL|store.FieldRelations|store.FieldEvidence, func(r *store.Row) error {
		if r.Key != 0 {
			rows = append(rows, scanned{r.ID, r.Key, r.KeyContent, r.Related, slices.Clone(r.Redirects), slices.Clone(r.Evidence)})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		key := texts.Text(store.FieldKey, r.key)
		row := query.ViewRow{CitationID: r.id, KeyContent: r.content, Related: r.related}
		for _, h := range r.redirects {
			u := texts.Text(store.FieldFinalURL, h)
			row.Redirects = append(row.Redirects, u)
			if tk := keyOf(u); tk != key {
				post(v.redirects, tk, key)
			}
		}
		for _, e := range r.evidence {
			ev := query.ViewEvidence{Retrieval: texts.Text(store.FieldRetrieval, e.Retrieval), Content: texts.Text(store.FieldContent, e.Content),
				Digest: texts.Text(store.FieldEvidence, e.Digest), SimHash: e.SimHash, HasSim: e.HasSim}
			row.Evidence = append(row.Evidence, ev)
			post(v.contents, ev.Content, key)
			post(v.digests, ev.Digest, key)
			if ev.HasSim {
				for b := range 4 {
					k := [2]uint64{uint64(b), ev.SimHash >> (16 * b) & 0xffff}
					if !slices.Contains(v.blocks[k], key) {
						v.blocks[k] = append(v.blocks[k], key)
					}
				}
			}
		}
		v.rows[key] = append(v.rows[key], row)
		sum := sha256.Sum256([]byte(key))
		post(v.ids, "g-"+hex.EncodeToString(sum[:6]), key)
	}
	// Links, and relation postings: what a keyed citation points at, by
	// key.
	for _, c := range snap.Citations {
		if c.Norm == nil || c.Norm.Rejected() {
			continue
		}
		row := &v.rows[c.Norm.Key][slices.IndexFunc(v.rows[c.Norm.Key], func(r query.ViewRow) bool { return r.CitationID == c.ID })]
		var us []string
		for _, r := range c.Retrievals {
			if r.FinalURL != "" && len(r.Hops) > 0 {
				us = append(us, r.FinalURL)
			}
			for _, cn := range r.Canonicals {
				us = append(us, cn.URL)
			}
		}
		for _, rel := range c.Relations {
			us = append(us, rel.Target)
		}
		for _, u := range us {
			post(v.relations, keyOf(u), c.Norm.Key)
			if !slices.Contains(row.Links, u) {
				row.Links = append(row.Links, u)
			}
		}
		slices.Sort(row.Links)
	}
	for _, m := range []map[string][]string{v.ids, v.redirects, v.relations, v.contents, v.digests} {
		for _, ks := range m {
			slices.Sort(ks)
		}
	}
	for _, ks := range v.blocks {
		slices.Sort(ks)
	}
	return v
}

// View runs fn on one read transaction of the store, with the view's
// postings: as a backend keeping a view answers store.Viewer.
func (v *scanView) View(ctx context.Context, fn func(store.Reader) error) error {
	return v.Store.View(ctx, func(r store.Reader) error {
		in := *v
		in.Store = r.(*citestore.Store)
		err := fn(&in)
		v.keyReads = in.keyReads
		return err
	})
}

func (v *scanView) HasView(_ context.Context, digest string) (bool, error) {
	return digest == v.digest, nil
}

func (v *scanView) KeyRows(_ context.Context, _, key string) ([]query.ViewRow, error) {
	v.keyReads++
	return v.rows[key], nil
}

func (v *scanView) KeysOfID(_ context.Context, _, id string) ([]string, error) {
	return v.ids[id], nil
}

func (v *scanView) RedirectSources(_ context.Context, _, target string) ([]string, error) {
	return v.redirects[target], nil
}

func (v *scanView) RelationSources(_ context.Context, _, target string) ([]string, error) {
	return v.relations[target], nil
}

func (v *scanView) KeysByContent(_ context.Context, _, hash string) ([]string, error) {
	return v.contents[hash], nil
}

func (v *scanView) KeysByDigest(_ context.Context, _, digest string) ([]string, error) {
	return v.digests[digest], nil
}

func (v *scanView) KeysBySimBlock(_ context.Context, _ string, block int, bits uint16) ([]string, error) {
	return v.blocks[[2]uint64{uint64(block), uint64(bits)}], nil
}

func groupJSON(t *testing.T, g *query.Group) string {
	t.Helper()
	b, err := json.MarshalIndent(g, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// viewTestOptions are the options the view tests group under: the
// defaults, review marks, and thresholds that bite.
var viewTestOptions = []query.GroupOptions{
	{},
	{MinSize: 2, Review: true},
	{MaxShared: 1, MinSize: 2, Review: true},
	{MaxShared: 2},
	{MinSize: 3, Verdict: model.VerdictNeedsContentCheck, Review: true},
	{MaxShared: 2, MinSize: 2, Verdict: model.VerdictIdentityConfirmed, Review: true},
}

// withViews gives every policy of st a complete grouping view. A
// database's later policy has no view until it is rebuilt, and the
// stores that add quads of their own below ingest (graph.Store.Add:
// "with extractions", "thresholds") leave the view ingest kept behind
// them, as `provgraph check` would say: those are rebuilt. The others
// are read as ingest kept them.
func withViews(t *testing.T, name string, st *graph.Store) {
	t.Helper()
	ctx := context.Background()
	cs := citestore.New(st)
	rawQuads := name == "with extractions" || name == "thresholds"
	pols, err := cs.Policies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pols {
		if has, err := cs.HasView(ctx, p.Digest); err != nil {
			t.Fatal(err)
		} else if !has || rawQuads {
			if _, err := cs.RebuildView(ctx, p.Digest, 100, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestGroupOfMatchesReport: the group GroupOf reads from a grouping view,
// by its smallest key, by any of its keys and by its id, is the full
// report's group byte for byte as JSON, on the corpus, the corpus under
// host rules, synthetic data and synthetic data with extractions, under
// options whose thresholds bite (a --max-shared of 1 and 2); Listed says
// whether the report under the options lists it (below --min-size, a
// group is listed when a relation marks it for review). Without a view,
// GroupOf groups the whole database and answers the same.
func TestGroupOfMatchesReport(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*graph.Store{
		"corpus":           corpusStore(t, "default"),
		"corpus, 2 rules":  corpusStore(t, "default", "testdata/hostrules.toml"),
		"synthetic":        synthStore(t, 600),
		"with extractions": extractedStore(t),
		"thresholds":       thresholdStore(t),
	}
	options := viewTestOptions
	for sname, st := range stores {
		withViews(t, sname, st)
		// The view made from a scan, and the view ingest kept in the
		// bbolt file (citestore's store.GroupView).
		for _, view := range []struct {
			name string
			v    query.Source
		}{{"scan view", newScanView(t, st)}, {"bbolt view", citestore.New(st)}} {
			name, v := sname+", "+view.name, view.v
			for _, opts := range options {
				// Every group, whatever the options list.
				all := opts
				all.MinSize, all.Verdict, all.Review = 0, "", false
				set, err := query.LoadGroups(ctx, citestore.New(st), "", all)
				if err != nil {
					t.Fatal(err)
				}
				every, err := set.Report(ctx)
				if err != nil {
					t.Fatal(err)
				}
				set, err = query.LoadGroups(ctx, citestore.New(st), "", opts)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := set.Report(ctx)
				if err != nil {
					t.Fatal(err)
				}
				listed := map[string]bool{}
				for _, g := range rep.Groups {
					listed[g.ID] = true
				}
				marked := 0
				for i, want := range every.Groups {
					w := groupJSON(t, want)
					if listed[want.ID] && len(want.Members) < opts.MinSize {
						marked++
					}
					keys := []string{want.Key}
					if len(want.Keys) > 1 {
						keys = want.Keys
					}
					for _, sel := range append(keys, want.ID) {
						a, err := query.GroupOf(ctx, v, "", sel, opts)
						if err != nil {
							t.Fatalf("%s %+v: GroupOf(%s): %v", name, opts, sel, err)
						}
						if !a.FromView {
							t.Fatalf("%s: GroupOf(%s) did not read the view", name, sel)
						}
						if g := groupJSON(t, a.Group); g != w {
							t.Errorf("%s %+v: GroupOf(%s) differs from the report's group:\n%.3000s\nwant\n%.3000s", name, opts, sel, g, w)
						}
						// A review decision's evidence (members' retrievals
						// and relations, from the citations) is the same too.
						if g, w := review.EvidenceOf(a.Group, "p").Digest(), review.EvidenceOf(want, "p").Digest(); g != w {
							t.Errorf("%s %+v: GroupOf(%s): review evidence differs from the report's group's", name, opts, sel)
						}
						if !slices.Equal(a.Warnings, every.Warnings) || a.Policy != every.Policy {
							t.Errorf("%s %+v: GroupOf(%s): policy %v and warnings %q, the report's %v and %q", name, opts, sel, a.Policy, a.Warnings, every.Policy, every.Warnings)
						}
						if a.Listed != listed[want.ID] {
							t.Errorf("%s %+v: GroupOf(%s): listed %v, the report %v", name, opts, sel, a.Listed, listed[want.ID])
						}
					}
					// Without a view: the whole database, the same answer.
					a, err := set.GroupOf(ctx, want.ID)
					if i%50 == 0 && err == nil {
						cs := citestore.New(st)
						a, err = query.GroupOf(ctx, struct {
							store.Catalog
							store.Scanner
						}{cs, cs}, "", want.Key, opts)
					}
					if err != nil {
						t.Fatal(err)
					}
					if a.FromView || groupJSON(t, a.Group) != w || a.Listed != listed[want.ID] {
						t.Errorf("%s %+v: GroupOf(%s) without a view differs from the report's group", name, opts, want.ID)
					}
				}
				t.Logf("%s %+v: %d groups, %d listed below --min-size by a review mark", name, opts, len(every.Groups), marked)
			}
		}
	}
}

// TestGroupOfUnknown: a key no citation has, an id no group has, and a key
// that is only a redirect target are ErrNoGroup, with and without a view.
func TestGroupOfUnknown(t *testing.T) {
	ctx := context.Background()
	st := thresholdStore(t)
	v := newScanView(t, st)
	for _, src := range []query.Source{v, citestore.New(st)} {
		// https://hub.test/landing is in a group (three keys redirect to
		// it) but no citation has it.
		for _, sel := range []string{"https://nowhere.example/", "g-000000000000", "https://hub.test/landing"} {
			if _, err := query.GroupOf(ctx, src, "", sel, query.GroupOptions{}); !errors.Is(err, query.ErrNoGroup) {
				t.Errorf("GroupOf(%s): %v, want ErrNoGroup", sel, err)
			}
		}
	}
}

// thresholdStore holds the cases where a group's answer depends on
// citations far from it: three keys redirecting to one landing page
// (past a --max-shared of 2, their number is all the answer needs), a
// chain of same-host redirects joining three keys, two groups sharing only
// a text digest (SimHashes with no 16-bit block in common), and two
// sharing only near-identical SimHashes (different digests).
func thresholdStore(t *testing.T) *graph.Store {
	t.Helper()
	ctx := context.Background()
	type cite struct{ id, raw, final, hash string }
	cites := []cite{
		{"h1", "https://hub.test/p1", "https://hub.test/landing", ""},
		{"h2", "https://hub.test/p2", "https://hub.test/landing", ""},
		{"h3", "https://hub.test/p3", "https://hub.test/landing", ""},
		{"j1", "https://join.test/a", "https://join.test/b", ""},
		{"j2", "https://join.test/b", "", ""},
		{"j3", "https://join.test/c", "https://join.test/a", ""},
		{"d1", "https://d1.test/x", "", "sha256:d1"},
		{"d2", "https://d2.test/y", "", "sha256:d2"},
		{"s1", "https://s1.test/x", "", "sha256:s1"},
		{"s2", "https://s2.test/y", "", "sha256:s2"},
	}
	var in bytes.Buffer
	rets := map[string]*model.Retrieval{}
	for i, c := range cites {
		ret := &model.Retrieval{FinalStatus: "200", ContentHash: c.hash}
		jret := map[string]any{"final_status": 200}
		if c.hash != "" {
			jret["content_hash"] = c.hash
		}
		if c.final != "" {
			ret.Hops = []model.Hop{{From: c.raw, To: c.final, Status: "301"}}
			ret.FinalURL = c.final
			jret["hops"] = []map[string]any{{"from": c.raw, "to": c.final, "status": 301}}
			jret["final_url"] = c.final
		}
		rets[c.id] = ret
		b, err := json.Marshal(map[string]any{"citation_id": c.id, "engine": "e", "answer_id": "a", "position": i + 1,
			"observed_at": "2026-11-10T10:00:00Z", "raw_url": c.raw, "retrieval": jret})
		if err != nil {
			t.Fatal(err)
		}
		in.Write(append(b, '\n'))
	}
	dir := t.TempDir()
	st, err := graph.Open(filepath.Join(dir, "t.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	path := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(ctx, st, path, "t.jsonl", ingest.Options{Policy: normalize.Default()}); err != nil {
		t.Fatal(err)
	}
	mapper, err := citestore.NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	var quads []graph.Quad
	for id, ex := range map[string]model.Extraction{
		"d1": {Extractor: "x/1", TextDigest: "sha256:same", SimHash: "0000000000000000"},
		"d2": {Extractor: "x/1", TextDigest: "sha256:same", SimHash: "ffffffffffffffff"},
		"s1": {Extractor: "x/1", TextDigest: "sha256:one", SimHash: "0123456789abcdef"},
		"s2": {Extractor: "x/1", TextDigest: "sha256:two", SimHash: "0123456789abcdee"},
	} {
		raw := cites[slices.IndexFunc(cites, func(c cite) bool { return c.id == id })].raw
		quads, _ = mapper.ExtractionQuads(quads, graph.IRI(model.RetrievalIRI(raw, rets[id])), ex)
	}
	if _, err := st.Add(quads); err != nil {
		t.Fatal(err)
	}
	return st
}

// BenchmarkGroupOf reads every group of a synthetic store in turn by its
// key, from a grouping view held in memory (scanView: the postings are
// maps, the members are read through the bbolt store's Lookup), under the
// groups defaults; keys/op is how many keys the neighbourhoods read.
func BenchmarkGroupOf(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		st   func(testing.TB) *graph.Store
	}{
		{"synthetic-3000", func(t testing.TB) *graph.Store { return synthStore(t, 3000) }},
		{"extractions-2000", extractedStore},
	} {
		b.Run(c.name, func(b *testing.B) {
			st := c.st(b)
			v := newScanView(b, st)
			set, err := query.LoadGroups(ctx, citestore.New(st), "", query.GroupOptions{})
			if err != nil {
				b.Fatal(err)
			}
			rep, err := set.Report(ctx)
			if err != nil {
				b.Fatal(err)
			}
			opts := query.GroupOptions{MinSize: 2, Review: true}
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := query.GroupOf(ctx, v, "", rep.Groups[i%len(rep.Groups)].Key, opts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(v.keyReads)/float64(b.N), "keys/op")
		})
	}
}

// TestGroupOfDamagedView: a view that names a citation the database does
// not hold, or holds under another key, is damage (store.ErrDamaged, exit
// 5), never a group made of it.
func TestGroupOfDamagedView(t *testing.T) {
	ctx := context.Background()
	st := corpusStore(t, "default")
	for name, damage := range map[string]func(v *scanView) string{
		"unknown citation": func(v *scanView) string {
			k := "https://ghost.example.test/"
			v.rows[k] = []query.ViewRow{{CitationID: "ghost"}}
			return k
		},
		"another key": func(v *scanView) string {
			for k, rows := range v.rows {
				moved := "https://moved.example.test/" + rows[0].CitationID
				v.rows[moved] = rows[:1]
				v.rows[k] = rows[1:]
				return moved
			}
			return ""
		},
	} {
		v := newScanView(t, st)
		key := damage(v)
		if _, err := query.GroupOf(ctx, v, "", key, query.GroupOptions{}); !errors.Is(err, store.ErrDamaged) {
			t.Errorf("%s: GroupOf(%s): %v, want ErrDamaged", name, key, err)
		}
	}
}
