// Package storetest is the suite every storage backend (internal/store)
// must pass, in the manner of restic's backend/test and cayley's
// graphtest: one test per behaviour the commands rely on, each on a fresh
// backend, with the backend's Check run after every test.
//
// A backend's own test calls Run with a function that opens an empty
// backend:
//
//	func TestBackend(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Backend { ... })
//	}
//
// The expected answers are computed from the fixture records themselves
// (their raw URLs, content hashes, and keys under the policy), never
// written by hand, so the suite is a differential test of the backend
// against its input. storetest imports no backend.
package storetest

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/synth"
)

// corpus is the fixture corpus: the query package's (case variants,
// language and tracking parameters, redirects, canonicals, shared content
// hashes, relations).
//
//go:embed testdata/corpus.jsonl
var corpus []byte

// Open opens an empty backend for one test. The suite closes nothing: the
// backend's cleanup is the opener's (t.Cleanup).
type Open func(t *testing.T) store.Backend

// Run runs every test of the suite against the backends open returns.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(t *testing.T, b store.Backend)
	}{
		{"Lookups", testLookups},
		{"EmptyAnswers", testEmptyAnswers},
		{"Idempotent", testIdempotent},
		{"ExactLiterals", testExactLiterals},
		{"AppendOnly", testAppendOnly},
		{"BatchAtomic", testBatchAtomic},
		{"ConflictInBatch", testConflictInBatch},
		{"Canceled", testCanceled},
		{"Policies", testPolicies},
		{"KeySharedByPolicies", testKeySharedByPolicies},
		{"Scan", testScan},
		{"ScanLean", testScanLean},
		{"ScanEvidence", testScanEvidence},
		{"ScanKeyContent", testScanKeyContent},
		{"ScanRedirects", testScanRedirects},
		{"ScanOtherPolicy", testScanOtherPolicy},
		{"ScanStops", testScanStops},
		{"ScanCitations", testScanCitations},
		{"ScanCitationsDetail", testScanCitationsDetail},
		{"ScanCitationsNotAsked", testScanCitationsNotAsked},
		{"LookupCitations", testLookupCitations},
		{"ByFinalURL", testByFinalURL},
		{"ByRelationTarget", testByRelationTarget},
		{"View", testView},
		{"GroupView", testGroupView},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := open(t)
			t.Cleanup(func() {
				if err := b.Check(context.Background()); err != nil {
					t.Errorf("Check after %s = %v", tt.name, err)
				}
			})
			tt.fn(t, b)
		})
	}
}

// Synthetic returns n synthetic records (internal/synth with opts),
// parsed as the input format gives them: data no fixture covers, for the
// tests of a backend.
func Synthetic(t testing.TB, opts synth.Options, n int) []*model.Record {
	t.Helper()
	var buf bytes.Buffer
	if err := synth.New(opts).Write(&buf, n); err != nil {
		t.Fatal(err)
	}
	var recs []*model.Record
	for _, line := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		r := new(model.Record)
		if err := json.Unmarshal(line, r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	return recs
}

// Corpus returns the fixture records, parsed as the input format gives
// them.
func Corpus(t testing.TB) []*model.Record {
	t.Helper()
	var recs []*model.Record
	sc := bufio.NewScanner(bytes.NewReader(corpus))
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		r := new(model.Record)
		if err := json.Unmarshal(sc.Bytes(), r); err != nil {
			t.Fatalf("corpus: %v", err)
		}
		recs = append(recs, r)
	}
	return recs
}

func appendAll(t *testing.T, b store.Backend, recs ...*model.Record) int {
	t.Helper()
	n, err := b.Append(context.Background(), store.Batch{Policy: normalize.Default(), Records: recs})
	if err != nil {
		t.Fatalf("Append = %v", err)
	}
	return n
}

// expected is what the lookups must answer for recs, computed from the
// records alone.
type expected struct {
	byRaw, byKey, byContent map[string][]string
	digest                  map[string]string
}

func expect(t *testing.T, pol *normalize.Policy, recs []*model.Record) expected {
	t.Helper()
	e := expected{byRaw: map[string][]string{}, byKey: map[string][]string{}, byContent: map[string][]string{}, digest: map[string]string{}}
	for _, r := range recs {
		id := r.ID()
		e.digest[id] = r.Digest()
		e.byRaw[*r.RawURL] = append(e.byRaw[*r.RawURL], id)
		if r.Retrieval != nil && r.Retrieval.ContentHash != "" {
			e.byContent[r.Retrieval.ContentHash] = append(e.byContent[r.Retrieval.ContentHash], id)
		}
		n, err := normalize.New(pol, &normalize.Options{Base: r.BaseURL})
		if err != nil {
			t.Fatalf("normalize.New: %v", err)
		}
		if res, err := n.Normalize(*r.RawURL); err == nil {
			e.byKey[res.Key] = append(e.byKey[res.Key], id)
		}
	}
	for _, m := range []map[string][]string{e.byRaw, e.byKey, e.byContent} {
		for k, ids := range m {
			slices.Sort(ids)
			m[k] = slices.Compact(ids)
		}
	}
	return e
}

// verify checks every lookup of b against e.
func verify(t *testing.T, b store.Backend, pol *normalize.Policy, e expected) {
	t.Helper()
	ctx := context.Background()
	check := func(what, arg string, got []string, err error, want []string) {
		t.Helper()
		if err != nil {
			t.Errorf("%s(%q) = %v", what, arg, err)
		} else if !slices.Equal(got, want) {
			t.Errorf("%s(%q) = %q, want %q", what, arg, got, want)
		}
	}
	for raw, want := range e.byRaw {
		got, err := b.ByRaw(ctx, raw)
		check("ByRaw", raw, got, err, want)
	}
	for key, want := range e.byKey {
		got, err := b.ByKey(ctx, pol.Digest(), key)
		check("ByKey", key, got, err, want)
	}
	for hash, want := range e.byContent {
		got, err := b.ByContent(ctx, hash)
		check("ByContent", hash, got, err, want)
	}
	for id, want := range e.digest {
		got, ok, err := b.Digest(ctx, id)
		if err != nil || !ok || got != want {
			t.Errorf("Digest(%q) = %q, %v, %v; want %q, true, nil", id, got, ok, err, want)
		}
	}
}

// testLookups: every raw URL, key and content hash of the corpus finds
// exactly the citations that carry it.
func testLookups(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	if n := appendAll(t, b, recs...); n != len(recs) {
		t.Errorf("Append added %d, want %d", n, len(recs))
	}
	verify(t, b, normalize.Default(), expect(t, normalize.Default(), recs))
}

// testEmptyAnswers: unknown evidence is an empty answer, not an error; a
// key is found only under the policy that made it.
func testEmptyAnswers(t *testing.T, b store.Backend) {
	ctx := context.Background()
	recs := Corpus(t)
	appendAll(t, b, recs...)
	e := expect(t, normalize.Default(), recs)
	for what, got := range map[string]func() ([]string, error){
		"ByRaw(unknown)":     func() ([]string, error) { return b.ByRaw(ctx, "https://unknown.example.test/") },
		"ByContent(unknown)": func() ([]string, error) { return b.ByContent(ctx, "sha256:unknown") },
		"ByKey(other policy)": func() ([]string, error) {
			for key := range e.byKey {
				return b.ByKey(ctx, normalize.Lenient().Digest(), key)
			}
			return nil, nil
		},
	} {
		ids, err := got()
		if err != nil || len(ids) != 0 {
			t.Errorf("%s = %q, %v; want none, nil", what, ids, err)
		}
	}
	if d, ok, err := b.Digest(ctx, "no-such-citation"); ok || err != nil {
		t.Errorf("Digest(unknown) = %q, %v, %v; want false, nil", d, ok, err)
	}
}

// testIdempotent: appending what is stored adds nothing and changes no
// answer.
func testIdempotent(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	if n := appendAll(t, b, recs...); n != 0 {
		t.Errorf("second Append added %d, want 0", n)
	}
	verify(t, b, normalize.Default(), expect(t, normalize.Default(), recs))
}

func rec(id, raw string) *model.Record {
	return &model.Record{CitationID: id, ObservedAt: "2026-11-10T10:00:00Z", RawURL: &raw}
}

// testExactLiterals: raw URLs differing only in case, percent-encoding,
// whitespace or Unicode form are different evidence, each found only by
// itself.
func testExactLiterals(t *testing.T, b store.Backend) {
	raws := []string{
		"https://ex.test/a b", "https://ex.test/a%20b", "https://ex.test/a+b",
		"https://ex.test/%7e", "https://ex.test/%7E", "https://ex.test/~",
		"HTTPS://EX.TEST/", "https://ex.test/", "https://ex.test",
		"https://ex.test/caf\u00e9", "https://ex.test/cafe\u0301",
		" https://ex.test/x", "https://ex.test/x ", "https://ex.test/x#",
		"not a url at all", "",
	}
	var recs []*model.Record
	for i, raw := range raws {
		recs = append(recs, rec("exact-"+string(rune('a'+i)), raw))
	}
	appendAll(t, b, recs...)
	verify(t, b, normalize.Default(), expect(t, normalize.Default(), recs))
}

// testAppendOnly: a citation id names one content forever; other content
// under it is refused and the stored citation is unchanged.
func testAppendOnly(t *testing.T, b store.Backend) {
	ctx := context.Background()
	first := rec("same-id", "https://ex.test/first")
	appendAll(t, b, first)
	_, err := b.Append(ctx, store.Batch{Policy: normalize.Default(), Records: []*model.Record{rec("same-id", "https://ex.test/second")}})
	var ce *store.ConflictError
	if !errors.Is(err, store.ErrConflict) || !errors.As(err, &ce) || ce.CitationID != "same-id" {
		t.Fatalf("Append(other content, same id) = %v, want a *ConflictError for same-id", err)
	}
	verify(t, b, normalize.Default(), expect(t, normalize.Default(), []*model.Record{first}))
	if ids, err := b.ByRaw(ctx, "https://ex.test/second"); err != nil || len(ids) != 0 {
		t.Errorf("ByRaw(refused raw URL) = %q, %v; want none", ids, err)
	}
}

// testBatchAtomic: a batch that fails stores none of its records, not even
// those before the failing one.
func testBatchAtomic(t *testing.T, b store.Backend) {
	ctx := context.Background()
	appendAll(t, b, rec("stored", "https://ex.test/stored"))
	batch := []*model.Record{rec("new-1", "https://ex.test/new-1"), rec("stored", "https://ex.test/changed"), rec("new-2", "https://ex.test/new-2")}
	if _, err := b.Append(ctx, store.Batch{Policy: normalize.Default(), Records: batch}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Append(batch with a conflict) = %v, want ErrConflict", err)
	}
	for _, id := range []string{"new-1", "new-2"} {
		if _, ok, err := b.Digest(ctx, id); ok || err != nil {
			t.Errorf("after a failed batch, Digest(%q) = %v, %v; want not stored", id, ok, err)
		}
	}
	for _, raw := range []string{"https://ex.test/new-1", "https://ex.test/new-2", "https://ex.test/changed"} {
		if ids, err := b.ByRaw(ctx, raw); err != nil || len(ids) != 0 {
			t.Errorf("after a failed batch, ByRaw(%q) = %q, %v; want none", raw, ids, err)
		}
	}
}

// testConflictInBatch: one id with two contents in one batch fails it;
// one id repeated with the same content is stored once.
func testConflictInBatch(t *testing.T, b store.Backend) {
	ctx := context.Background()
	_, err := b.Append(ctx, store.Batch{Policy: normalize.Default(), Records: []*model.Record{rec("twice", "https://ex.test/1"), rec("twice", "https://ex.test/2")}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Append(id twice, two contents) = %v, want ErrConflict", err)
	}
	if _, ok, _ := b.Digest(ctx, "twice"); ok {
		t.Errorf("the failed batch's citation is stored")
	}
	if n := appendAll(t, b, rec("twice", "https://ex.test/1"), rec("twice", "https://ex.test/1")); n != 1 {
		t.Errorf("Append(id twice, same content) added %d, want 1", n)
	}
}

// testCanceled: a canceled append fails with the context's error and
// stores nothing.
func testCanceled(t *testing.T, b store.Backend) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Append(ctx, store.Batch{Policy: normalize.Default(), Records: Corpus(t)}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Append(canceled) = %v, want context.Canceled", err)
	}
	for _, r := range Corpus(t) {
		if _, ok, _ := b.Digest(context.Background(), r.ID()); ok {
			t.Fatalf("a canceled Append stored %s", r.ID())
		}
	}
}

// testKeySharedByPolicies: a key text that two policies made, for
// different citations, finds under each policy only the citations
// normalized under it (lineage reads a group's members by key under the
// policy it shows, and must not read the other policy's).
func testKeySharedByPolicies(t *testing.T, b store.Backend) {
	ctx := context.Background()
	const raw = "https://ex.test/shared"
	for _, bt := range []store.Batch{
		{Policy: normalize.Default(), Records: []*model.Record{rec("shared-default", raw)}},
		{Policy: normalize.Lenient(), Records: []*model.Record{rec("shared-lenient", raw)}},
	} {
		if _, err := b.Append(ctx, bt); err != nil {
			t.Fatalf("Append under %s = %v", bt.Policy.Name(), err)
		}
	}
	for _, tt := range []struct {
		pol  *normalize.Policy
		want []string
	}{{normalize.Default(), []string{"shared-default"}}, {normalize.Lenient(), []string{"shared-lenient"}}} {
		if ids, err := b.ByKey(ctx, tt.pol.Digest(), raw); err != nil || !slices.Equal(ids, tt.want) {
			t.Errorf("ByKey(%s, %q) = %q, %v; want %q", tt.pol.Name(), raw, ids, err, tt.want)
		}
	}
	if ids, err := b.ByRaw(ctx, raw); err != nil || !slices.Equal(ids, []string{"shared-default", "shared-lenient"}) {
		t.Errorf("ByRaw(%q) = %q, %v; want both citations", raw, ids, err)
	}
}

// testPolicies: every policy a batch was normalized under is listed once,
// by name, version and digest. A batch normalizes the records it adds;
// records already stored are not normalized again (that is renormalizing,
// not appending).
func testPolicies(t *testing.T, b store.Backend) {
	ctx := context.Background()
	if pols, err := b.Policies(ctx); err != nil || len(pols) != 0 {
		t.Fatalf("Policies(empty) = %v, %v; want none", pols, err)
	}
	recs := Corpus(t)
	lenient := []*model.Record{rec("lenient-1", "HTTP://Ex.Test/A?utm_source=x"), rec("lenient-2", "https://ex.test/b")}
	for _, bt := range []store.Batch{{Policy: normalize.Default(), Records: recs}, {Policy: normalize.Lenient(), Records: lenient}, {Policy: normalize.Default(), Records: recs}} {
		if _, err := b.Append(ctx, bt); err != nil {
			t.Fatalf("Append under %s = %v", bt.Policy.Name(), err)
		}
	}
	var want []model.PolicyRef
	for _, p := range []*normalize.Policy{normalize.Default(), normalize.Lenient()} {
		want = append(want, model.PolicyRef{Name: p.Name(), Version: p.Version(), Digest: p.Digest()})
	}
	slices.SortFunc(want, func(a, b model.PolicyRef) int { return cmpString(a.Digest, b.Digest) })
	got, err := b.Policies(ctx)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("Policies = %v, %v; want %v", got, err, want)
	}
	// Each batch's keys are found under its own policy, and only there.
	verify(t, b, normalize.Default(), expect(t, normalize.Default(), recs))
	verify(t, b, normalize.Lenient(), expect(t, normalize.Lenient(), lenient))
	for key := range expect(t, normalize.Lenient(), lenient).byKey {
		if ids, err := b.ByKey(ctx, normalize.Default().Digest(), key); err != nil || len(ids) != 0 {
			t.Errorf("ByKey(%s, %q) = %q, %v; want none: the key is %s's", normalize.Default().Name(), key, ids, err, normalize.Lenient().Name())
		}
	}
}

// ScanRow is a scanned row with its handles resolved: what a backend's
// scan says, in values.
type ScanRow struct {
	ID, Raw, Key                            string
	Content, FinalURL, Canonical, Relations []string
	Rejected, KeyContent, Related           bool
	Redirects                               []string
	Evidence                                []ScanEvidence // sorted by content hash, then digest, then SimHash
}

// ScanEvidence is a store.Evidence with its handles resolved.
type ScanEvidence struct {
	Retrieval       string // model.RetrievalIRI
	Content, Digest string
	SimHash         uint64
	HasSim          bool
}

// ScanAll scans b under the policy with the fields f and resolves every
// row, checking the handle contract on the way: handles of a field are in
// 1..Len, equal handles have equal texts and equal texts equal handles,
// lists are sorted without repeats, rows come in id order.
func ScanAll(t testing.TB, b store.Scanner, policyDigest string, f store.Fields) []ScanRow {
	t.Helper()
	var rows []ScanRow
	var all []store.Row
	texts, err := b.Scan(context.Background(), policyDigest, f, func(r *store.Row) error {
		c := *r
		for _, hs := range []*[]store.Handle{&c.Content, &c.FinalURL, &c.Canonical, &c.Relations, &c.Redirects} {
			if !slices.IsSorted(*hs) || len(slices.Compact(slices.Clone(*hs))) != len(*hs) {
				t.Errorf("row %s: handles %v are not sorted and distinct", r.ID, *hs)
			}
			*hs = slices.Clone(*hs)
		}
		if !slices.IsSortedFunc(r.Evidence, store.CompareEvidence) {
			t.Errorf("row %s: evidence %v is not sorted (store.CompareEvidence)", r.ID, r.Evidence)
		}
		c.Evidence = slices.Clone(r.Evidence)
		all = append(all, c)
		return nil
	})
	if err != nil {
		t.Fatalf("Scan = %v", err)
	}
	byText := map[store.Fields]map[string]store.Handle{}
	resolve := func(field store.Fields, h store.Handle) string {
		if h == 0 {
			return ""
		}
		if f&field == 0 && !((field == store.FieldContent || field == store.FieldRetrieval) && f&store.FieldEvidence != 0) {
			t.Errorf("Scan filled field %d, which was not asked for", field)
		}
		if int(h) > texts.Len(field) {
			t.Errorf("handle %d of field %d above Len %d", h, field, texts.Len(field))
		}
		v := texts.Text(field, h)
		if byText[field] == nil {
			byText[field] = map[string]store.Handle{}
		}
		if prev, ok := byText[field][v]; ok && prev != h {
			t.Errorf("field %d: %q has handles %d and %d", field, v, prev, h)
		}
		byText[field][v] = h
		return v
	}
	list := func(field store.Fields, hs []store.Handle) []string {
		var out []string
		for _, h := range hs {
			out = append(out, resolve(field, h))
		}
		slices.Sort(out)
		return out
	}
	evidence := func(evs []store.Evidence) []ScanEvidence {
		var out []ScanEvidence
		for _, e := range evs {
			out = append(out, ScanEvidence{Retrieval: resolve(store.FieldRetrieval, e.Retrieval), Content: resolve(store.FieldContent, e.Content), Digest: resolve(store.FieldEvidence, e.Digest), SimHash: e.SimHash, HasSim: e.HasSim})
		}
		return out
	}
	for i, r := range all {
		if i > 0 && all[i-1].ID >= r.ID {
			t.Errorf("Scan: row %q after %q, want id order", r.ID, all[i-1].ID)
		}
		rows = append(rows, ScanRow{
			ID: r.ID, Raw: resolve(store.FieldRaw, r.Raw), Key: resolve(store.FieldKey, r.Key),
			Content: list(store.FieldContent, r.Content), FinalURL: list(store.FieldFinalURL, r.FinalURL),
			Canonical: list(store.FieldCanonical, r.Canonical), Relations: list(store.FieldRelations, r.Relations),
			Rejected: r.Rejected, KeyContent: r.KeyContent, Evidence: evidence(r.Evidence),
			Redirects: list(store.FieldFinalURL, r.Redirects), Related: r.Related,
		})
	}
	return rows
}

const allFields = store.FieldEvidence | store.FieldRaw | store.FieldKey | store.FieldContent | store.FieldFinalURL | store.FieldCanonical | store.FieldRelations

// testScan: every citation once, in id order, with its raw URL, key,
// content hash, final URL, canonical URLs and (at least) its declared
// relation targets, as the records say.
func testScan(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	pol := normalize.Default()
	want := map[string]*model.Record{}
	for _, r := range recs {
		want[r.ID()] = r
	}
	rows := ScanAll(t, b, pol.Digest(), allFields)
	if len(rows) != len(want) {
		t.Errorf("Scan returned %d rows, want %d", len(rows), len(want))
	}
	for _, row := range rows {
		r := want[row.ID]
		if r == nil {
			t.Errorf("Scan returned %q, which was not appended", row.ID)
			continue
		}
		if row.Raw != *r.RawURL {
			t.Errorf("row %s: raw %q, want %q", row.ID, row.Raw, *r.RawURL)
		}
		n, _ := normalize.New(pol, &normalize.Options{Base: r.BaseURL})
		wantKey := ""
		res, err := n.Normalize(*r.RawURL)
		if err == nil {
			wantKey = res.Key
		}
		if row.Key != wantKey || row.Rejected != (err != nil) {
			t.Errorf("row %s: key %q, rejected %v; want %q, %v", row.ID, row.Key, row.Rejected, wantKey, err != nil)
		}
		var wantEv []ScanEvidence
		if rt := r.Retrieval; rt != nil && model.Successful(rt.Outcome, string(rt.FinalStatus), "") {
			wantEv = append(wantEv, ScanEvidence{Retrieval: model.RetrievalIRI(*r.RawURL, rt), Content: rt.ContentHash})
		}
		if !slices.Equal(row.Evidence, wantEv) {
			t.Errorf("row %s: evidence %+v, want %+v", row.ID, row.Evidence, wantEv)
		}
		var content, final, canon, rels []string
		if rt := r.Retrieval; rt != nil {
			if rt.ContentHash != "" {
				content = append(content, rt.ContentHash)
			}
			if rt.FinalURL != "" {
				final = append(final, rt.FinalURL)
			}
			for _, c := range rt.Canonical {
				canon = append(canon, c.URL)
			}
		}
		for _, rel := range r.Relations {
			rels = append(rels, rel.Target)
		}
		slices.Sort(canon)
		canon = slices.Compact(canon)
		if !slices.Equal(row.Content, content) || !slices.Equal(row.FinalURL, final) || !slices.Equal(row.Canonical, canon) {
			t.Errorf("row %s: content %q, final %q, canonical %q; want %q, %q, %q", row.ID, row.Content, row.FinalURL, row.Canonical, content, final, canon)
		}
		for _, target := range rels {
			if !slices.Contains(row.Relations, target) {
				t.Errorf("row %s: relations %q lack the declared target %q", row.ID, row.Relations, target)
			}
		}
	}
}

// testScanEvidence: a retrieval is content evidence exactly when its
// outcome is ok or not recorded and its status, if recorded, is 2xx
// (model.Successful); a rejected raw URL is told from one never normalized
// under the scan's policy.
func testScanEvidence(t *testing.T, b store.Backend) {
	ret := func(r *model.Record, outcome, status, hash string) *model.Record {
		r.Retrieval = &model.Retrieval{RetrievedAt: "2026-11-10T10:00:01Z", Outcome: outcome, FinalStatus: model.Integer(status), ContentHash: hash}
		return r
	}
	recs := []*model.Record{
		ret(rec("ev-ok", "https://ex.test/ok"), model.OutcomeOK, "200", "sha256:aa"),
		ret(rec("ev-ok-same", "https://ex.test/ok2"), model.OutcomeOK, "200", "sha256:aa"),
		ret(rec("ev-input", "https://ex.test/in"), "", "", "sha256:bb"),
		ret(rec("ev-nohash", "https://ex.test/nohash"), "", "204", ""),
		ret(rec("ev-http-error", "https://ex.test/err"), model.OutcomeHTTPError, "404", "sha256:cc"),
		ret(rec("ev-404", "https://ex.test/404"), "", "404", "sha256:dd"),
		ret(rec("ev-timeout", "https://ex.test/slow"), model.OutcomeTimeout, "", ""),
		rec("ev-none", "https://ex.test/none"),
		rec("ev-rejected", "not a url at all"),
	}
	// ev-shared is a second citation of ev-ok's raw URL with the same
	// fetch: one retrieval, two citations.
	recs = append(recs, ret(rec("ev-shared", "https://ex.test/ok"), model.OutcomeOK, "200", "sha256:aa"))
	appendAll(t, b, recs...)
	want := map[string][]ScanEvidence{}
	for _, r := range recs[:4] {
		want[r.CitationID] = []ScanEvidence{{Retrieval: model.RetrievalIRI(*r.RawURL, r.Retrieval), Content: r.Retrieval.ContentHash}}
	}
	want["ev-shared"] = want["ev-ok"]
	rows := ScanAll(t, b, normalize.Default().Digest(), store.FieldKey|store.FieldEvidence)
	if len(rows) != len(recs) {
		t.Fatalf("Scan returned %d rows, want %d", len(rows), len(recs))
	}
	for _, row := range rows {
		if !slices.Equal(row.Evidence, want[row.ID]) {
			t.Errorf("row %s: evidence %+v, want %+v", row.ID, row.Evidence, want[row.ID])
		}
		if row.Rejected != (row.ID == "ev-rejected") || (row.Key == "") != row.Rejected {
			t.Errorf("row %s: key %q, rejected %v", row.ID, row.Key, row.Rejected)
		}
		if row.Content != nil {
			t.Errorf("row %s: content %q filled, FieldContent was not asked for", row.ID, row.Content)
		}
	}
	for _, row := range ScanAll(t, b, normalize.Lenient().Digest(), store.FieldKey) {
		if row.Rejected || row.Key != "" {
			t.Errorf("row %s under a policy it was never normalized under: key %q, rejected %v; want neither", row.ID, row.Key, row.Rejected)
		}
	}
}

// testScanKeyContent: a key a host rule of the scan's policy marks
// CompareContent (its server defines what the path means) is flagged
// KeyContent; other keys, and rows under another policy, are not.
func testScanKeyContent(t *testing.T, b store.Backend) {
	text := string(normalize.Default().Text()) + "\n[[host]]\nname = \"case-insensitive\"\nhosts = [\"files.ex.test\"]\npath_case = \"insensitive\"\nreason = \"a test server on a case-insensitive file system\"\n"
	pol, err := normalize.ParsePolicy([]byte(text), "storetest")
	if err != nil {
		t.Fatalf("ParsePolicy = %v", err)
	}
	recs := []*model.Record{rec("kc-rule", "https://files.ex.test/Docs/A"), rec("kc-plain", "https://ex.test/Docs/A")}
	if _, err := b.Append(context.Background(), store.Batch{Policy: pol, Records: recs}); err != nil {
		t.Fatalf("Append = %v", err)
	}
	for _, row := range ScanAll(t, b, pol.Digest(), store.FieldKey) {
		if row.Key == "" || row.KeyContent != (row.ID == "kc-rule") {
			t.Errorf("row %s: key %q, key content %v; want a key, content %v", row.ID, row.Key, row.KeyContent, row.ID == "kc-rule")
		}
	}
	for _, row := range ScanAll(t, b, normalize.Default().Digest(), store.FieldKey) {
		if row.KeyContent {
			t.Errorf("row %s under a policy it was never normalized under: key content", row.ID)
		}
	}
}

// testScanRedirects: a row's redirects are the final URLs of its
// redirected retrievals whose hops all stay on one host (userinfo and port
// aside); a citation is related when it has a relation, a canonical
// declaration or a redirect with a final URL.
func testScanRedirects(t *testing.T, b store.Backend) {
	ret := func(r *model.Record, final string, hops ...[2]string) *model.Record {
		r.Retrieval = &model.Retrieval{RetrievedAt: "2026-11-10T10:00:01Z", FinalURL: final, FinalStatus: "200"}
		for _, h := range hops {
			r.Retrieval.Hops = append(r.Retrieval.Hops, model.Hop{From: h[0], To: h[1], Status: "301"})
		}
		return r
	}
	canon := ret(rec("rd-canonical", "https://ex.test/c"), "")
	canon.Retrieval.Canonical = []model.Canonical{{URL: "https://ex.test/canonical", Source: "link"}}
	rel := rec("rd-relation", "https://ex.test/r")
	rel.Relations = []model.Relation{{Type: model.RelMirrorOf, Target: "https://mirror.test/r"}}
	recs := []*model.Record{
		ret(rec("rd-same", "http://ex.test/a"), "https://ex.test/b", [2]string{"http://ex.test/a", "https://ex.test/b"}),
		ret(rec("rd-port", "https://ex.test:8443/a"), "https://ex.test/d", [2]string{"https://ex.test:8443/a", "https://u@ex.test/b"}, [2]string{"https://u@ex.test/b", "https://ex.test/d"}),
		ret(rec("rd-cross", "https://ex.test/x"), "https://other.test/x", [2]string{"https://ex.test/x", "https://ex.test/y"}, [2]string{"https://ex.test/y", "https://other.test/x"}),
		ret(rec("rd-nofinal", "https://ex.test/n"), "", [2]string{"https://ex.test/n", "https://ex.test/m"}),
		ret(rec("rd-plain", "https://ex.test/p"), "https://ex.test/p"),
		canon, rel, rec("rd-none", "https://ex.test/none"),
	}
	appendAll(t, b, recs...)
	wantRedirects := map[string][]string{"rd-same": {"https://ex.test/b"}, "rd-port": {"https://ex.test/d"}}
	related := map[string]bool{"rd-same": true, "rd-port": true, "rd-cross": true, "rd-canonical": true, "rd-relation": true}
	rows := ScanAll(t, b, normalize.Default().Digest(), store.FieldFinalURL|store.FieldRelations)
	if len(rows) != len(recs) {
		t.Fatalf("Scan returned %d rows, want %d", len(rows), len(recs))
	}
	for _, row := range rows {
		if !slices.Equal(row.Redirects, wantRedirects[row.ID]) || row.Related != related[row.ID] {
			t.Errorf("row %s: redirects %q, related %v; want %q, %v", row.ID, row.Redirects, row.Related, wantRedirects[row.ID], related[row.ID])
		}
	}
	for _, row := range ScanAll(t, b, normalize.Default().Digest(), store.FieldRelations) {
		if row.Redirects != nil || row.Related != related[row.ID] {
			t.Errorf("row %s without FieldFinalURL: redirects %q, related %v; want none, %v", row.ID, row.Redirects, row.Related, related[row.ID])
		}
	}
	for _, row := range ScanAll(t, b, normalize.Default().Digest(), store.FieldFinalURL) {
		if row.Related {
			t.Errorf("row %s without FieldRelations: related", row.ID)
		}
	}
}

// testScanLean: fields not asked for stay zero.
func testScanLean(t *testing.T, b store.Backend) {
	appendAll(t, b, Corpus(t)...)
	keyed := 0
	for _, row := range ScanAll(t, b, normalize.Default().Digest(), store.FieldKey) {
		if row.Raw != "" || row.Content != nil || row.FinalURL != nil || row.Canonical != nil || row.Relations != nil || row.Evidence != nil || row.Redirects != nil || row.Related {
			t.Errorf("lean row %s has fields not asked for: %+v", row.ID, row)
		}
		if row.Key != "" {
			keyed++
		}
	}
	if keyed == 0 {
		t.Errorf("a key-only scan filled no key")
	}
}

// testScanOtherPolicy: under a policy nothing was normalized under, every
// row is there without a key.
func testScanOtherPolicy(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	rows := ScanAll(t, b, normalize.Lenient().Digest(), allFields)
	if len(rows) != len(recs) {
		t.Errorf("Scan(other policy) returned %d rows, want %d", len(rows), len(recs))
	}
	for _, row := range rows {
		if row.Key != "" {
			t.Errorf("row %s: key %q under a policy it was never normalized under", row.ID, row.Key)
		}
	}
}

// testScanStops: an error from fn ends the scan and is returned.
func testScanStops(t *testing.T, b store.Backend) {
	appendAll(t, b, Corpus(t)...)
	stop := errors.New("stop")
	calls := 0
	_, err := b.Scan(context.Background(), normalize.Default().Digest(), allFields, func(*store.Row) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Scan with fn failing = %v after %d calls, want stop after 1", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := b.Scan(ctx, normalize.Default().Digest(), allFields, func(*store.Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Scan(canceled) = %v, want context.Canceled", err)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// scanCitations scans b under pol with the fields f and returns every
// row's whole citation (Texts.Citations), asked for in reverse row order
// so that a backend must honour the row numbers.
func scanCitations(t *testing.T, b store.Backend, pol string, f store.Fields) []store.Citation {
	t.Helper()
	n := 0
	texts, err := b.Scan(context.Background(), pol, f, func(*store.Row) error {
		n++
		return nil
	})
	if err != nil {
		t.Fatalf("Scan = %v", err)
	}
	rows := make([]int32, n)
	for i := range rows {
		rows[i] = int32(n - 1 - i)
	}
	rev := make([]store.Citation, n)
	texts.Citations(rows, rev)
	slices.Reverse(rev)
	return rev
}

// testScanCitations: with FieldCitation, Texts.Citations builds each
// scanned row's citation as the records say: id, raw URL, the
// normalization under the scan's policy (key, rejection, rules, compare,
// host rule), the retrieval with its hops (as many) and canonical
// declarations, and the declared relations.
func testScanCitations(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	pol := normalize.Default()
	cits := scanCitations(t, b, pol.Digest(), store.FieldCitation)
	if len(cits) != len(recs) {
		t.Fatalf("Citations built %d citations, want %d", len(cits), len(recs))
	}
	want := map[string]*model.Record{}
	for _, r := range recs {
		want[r.ID()] = r
	}
	for i, c := range cits {
		r := want[c.ID]
		if r == nil {
			t.Errorf("citation %d: id %q, which was not appended", i, c.ID)
			continue
		}
		if i > 0 && cits[i-1].ID >= c.ID {
			t.Errorf("citation %d: id %q after %q, want the scan's id order", i, c.ID, cits[i-1].ID)
		}
		if c.Raw != *r.RawURL {
			t.Errorf("citation %s: raw %q, want %q", c.ID, c.Raw, *r.RawURL)
		}
		checkNormalization(t, c, r, pol)
		checkRetrievals(t, c, r, false)
		var gotRels, wantRels []string
		for _, rel := range c.Relations {
			if rel.Evidence == model.EvidenceDeclared {
				gotRels = append(gotRels, rel.Type+" "+rel.Target)
			}
		}
		for _, rel := range r.Relations {
			wantRels = append(wantRels, rel.Type+" "+rel.Target)
		}
		slices.Sort(gotRels)
		slices.Sort(wantRels)
		if !slices.Equal(gotRels, wantRels) {
			t.Errorf("citation %s: declared relations %q, want %q", c.ID, gotRels, wantRels)
		}
	}
}

func checkNormalization(t *testing.T, c store.Citation, r *model.Record, pol *normalize.Policy) {
	t.Helper()
	if c.Norm == nil {
		t.Errorf("citation %s: no normalization under %s", c.ID, pol.Name())
		return
	}
	if c.Norm.Policy == nil || c.Norm.Policy.Digest != pol.Digest() {
		t.Errorf("citation %s: normalization under %+v, want digest %s", c.ID, c.Norm.Policy, pol.Digest())
	}
	n, err := normalize.New(pol, &normalize.Options{Base: r.BaseURL})
	if err != nil {
		t.Fatal(err)
	}
	res, err := n.Normalize(*r.RawURL)
	var rules []string
	for _, st := range res.Steps() {
		if !slices.Contains(rules, string(st.Rule)) {
			rules = append(rules, string(st.Rule))
		}
	}
	if !slices.Equal(c.Norm.Rules, rules) {
		t.Errorf("citation %s: rules %q, want %q", c.ID, c.Norm.Rules, rules)
	}
	var nerr *normalize.Error
	if errors.As(err, &nerr) {
		if !c.Norm.Rejected() || c.Norm.ErrorCode != string(nerr.Code) || c.Norm.Key != "" {
			t.Errorf("citation %s: error %q, key %q; want the rejection %q", c.ID, c.Norm.ErrorCode, c.Norm.Key, nerr.Code)
		}
		return
	}
	if c.Norm.Rejected() || c.Norm.Key != res.Key || c.Norm.Compare != string(res.Compare) || c.Norm.HostRule != res.HostRule {
		t.Errorf("citation %s: key %q (compare %q, host rule %q, error %q), want %q (%q, %q)", c.ID,
			c.Norm.Key, c.Norm.Compare, c.Norm.HostRule, c.Norm.ErrorCode, res.Key, res.Compare, res.HostRule)
	}
}

// checkRetrievals checks c's retrievals against r's; detail (FieldDetail)
// checks the hops' ends and numbers too.
func checkRetrievals(t *testing.T, c store.Citation, r *model.Record, detail bool) {
	t.Helper()
	rt := r.Retrieval
	if rt == nil {
		if len(c.Retrievals) != 0 {
			t.Errorf("citation %s: %d retrievals, want none", c.ID, len(c.Retrievals))
		}
		return
	}
	if len(c.Retrievals) != 1 {
		t.Errorf("citation %s: %d retrievals, want 1", c.ID, len(c.Retrievals))
		return
	}
	got := c.Retrievals[0]
	if got.Node != model.RetrievalIRI(*r.RawURL, rt) || got.RetrievedAt != rt.RetrievedAt || got.FinalURL != rt.FinalURL ||
		got.ContentHash != rt.ContentHash || got.Outcome != rt.Outcome || string(got.FinalStatus) != string(rt.FinalStatus) {
		t.Errorf("citation %s: retrieval %+v, want %+v", c.ID, got, rt)
	}
	if len(got.Hops) != len(rt.Hops) {
		t.Errorf("citation %s: %d hops, want %d", c.ID, len(got.Hops), len(rt.Hops))
	} else if detail {
		for j, h := range got.Hops {
			if h.Index != j || h.From != rt.Hops[j].From || h.To != rt.Hops[j].To {
				t.Errorf("citation %s: hop %d is %d %q -> %q, want %q -> %q", c.ID, j, h.Index, h.From, h.To, rt.Hops[j].From, rt.Hops[j].To)
			}
		}
	}
	canon := slices.Clone(rt.Canonical)
	slices.SortFunc(canon, func(a, b model.Canonical) int { return cmpString(a.Source+a.URL, b.Source+b.URL) })
	canon = slices.Compact(canon)
	if !slices.Equal(got.Canonicals, canon) && len(got.Canonicals)+len(canon) > 0 {
		t.Errorf("citation %s: canonical %+v, want %+v", c.ID, got.Canonicals, canon)
	}
}

// testScanCitationsDetail: with FieldDetail too, the citations carry what
// the record says of the answer it was in, and every hop's ends.
func testScanCitationsDetail(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	want := map[string]*model.Record{}
	for _, r := range recs {
		want[r.ID()] = r
	}
	for _, c := range scanCitations(t, b, normalize.Default().Digest(), store.FieldCitation|store.FieldDetail) {
		r := want[c.ID]
		if r == nil {
			t.Errorf("citation %q was not appended", c.ID)
			continue
		}
		if c.Engine != r.Engine || c.AnswerID != r.AnswerID || c.Question != r.Question || c.BaseURL != r.BaseURL ||
			c.ObservedAt != r.ObservedAt || c.Position != string(r.Position) {
			t.Errorf("citation %s: engine %q, answer %q, question %q, base %q, observed %q, position %q; want %q, %q, %q, %q, %q, %q", c.ID,
				c.Engine, c.AnswerID, c.Question, c.BaseURL, c.ObservedAt, c.Position,
				r.Engine, r.AnswerID, r.Question, r.BaseURL, r.ObservedAt, r.Position)
		}
		checkRetrievals(t, c, r, true)
	}
}

// testScanCitationsNotAsked: without FieldCitation, Citations leaves dst
// as it is.
func testScanCitationsNotAsked(t *testing.T, b store.Backend) {
	appendAll(t, b, Corpus(t)...)
	texts, err := b.Scan(context.Background(), normalize.Default().Digest(), store.FieldKey, func(*store.Row) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	dst := []store.Citation{{ID: "unchanged"}}
	texts.Citations([]int32{0}, dst)
	if dst[0].ID != "unchanged" || dst[0].Norm != nil {
		t.Errorf("Citations without FieldCitation set %+v", dst[0])
	}
}

// testLookupCitations: Lookup.Citations answers, for each id in its
// order, the citation a scan builds whole (FieldDetail) plus its parsed
// step log and the policies it was normalized under; nil for an id not
// stored.
func testLookupCitations(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	pol := normalize.Default()
	scanned := scanCitations(t, b, pol.Digest(), store.FieldCitation|store.FieldDetail)
	ids := []string{"no-such-citation"}
	for i := len(scanned) - 1; i >= 0; i-- {
		ids = append(ids, scanned[i].ID)
	}
	got, err := b.Citations(context.Background(), pol.Digest(), ids)
	if err != nil {
		t.Fatalf("Citations = %v", err)
	}
	if len(got) != len(ids) || got[0] != nil {
		t.Fatalf("Citations(%d ids) = %d citations, the unknown id's %v; want %d, nil", len(ids), len(got), got[0], len(ids))
	}
	want := map[string]*model.Record{}
	for _, r := range recs {
		want[r.ID()] = r
	}
	for i, c := range got[1:] {
		s := scanned[len(scanned)-1-i]
		if c == nil || c.ID != s.ID {
			t.Errorf("Citations: %d is %v, want %s", i+1, c, s.ID)
			continue
		}
		checkNormalization(t, *c, want[c.ID], pol)
		checkRetrievals(t, *c, want[c.ID], true)
		if c.Raw != s.Raw || c.Engine != s.Engine || c.AnswerID != s.AnswerID || c.ObservedAt != s.ObservedAt || len(c.Relations) != len(s.Relations) {
			t.Errorf("Citations: %s differs from its scan: %+v, want %+v", c.ID, c, s)
		}
		var rules []string
		for _, st := range c.Norm.Steps {
			if !slices.Contains(rules, string(st.Rule)) {
				rules = append(rules, string(st.Rule))
			}
		}
		if !slices.Equal(rules, c.Norm.Rules) {
			t.Errorf("Citations: %s has steps naming %q, rules %q", c.ID, rules, c.Norm.Rules)
		}
		if !slices.Contains(c.Under, pol.Name()+"@"+pol.Version()) {
			t.Errorf("Citations: %s normalized under %q, want %s among them", c.ID, c.Under, pol.Name()+"@"+pol.Version())
		}
	}
}

// testByFinalURL: the citations of every retrieval ending at a final URL,
// a retrieval at a time, as the records say; fn returning false stops it.
func testByFinalURL(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	want := map[string]map[string][]string{} // final URL -> retrieval -> ids
	for _, r := range recs {
		if rt := r.Retrieval; rt != nil && rt.FinalURL != "" {
			if want[rt.FinalURL] == nil {
				want[rt.FinalURL] = map[string][]string{}
			}
			iri := model.RetrievalIRI(*r.RawURL, rt)
			want[rt.FinalURL][iri] = append(want[rt.FinalURL][iri], r.ID())
		}
	}
	if len(want) == 0 {
		t.Fatal("the corpus has no final URL")
	}
	ctx := context.Background()
	for url, byRet := range want {
		var wantSets, gotSets []string
		for _, ids := range byRet {
			slices.Sort(ids)
			wantSets = append(wantSets, fmt.Sprint(slices.Compact(ids)))
		}
		err := b.ByFinalURL(ctx, url, func(ids []string) bool {
			gotSets = append(gotSets, fmt.Sprint(ids))
			return true
		})
		slices.Sort(wantSets)
		slices.Sort(gotSets)
		if err != nil || !slices.Equal(gotSets, wantSets) {
			t.Errorf("ByFinalURL(%q) = %q, %v; want %q", url, gotSets, err, wantSets)
		}
		calls := 0
		if err := b.ByFinalURL(ctx, url, func([]string) bool { calls++; return false }); err != nil || calls != 1 {
			t.Errorf("ByFinalURL(%q) with fn stopping: %d calls, %v; want 1", url, calls, err)
		}
	}
	if err := b.ByFinalURL(ctx, "https://nowhere.example.test/", func([]string) bool {
		t.Error("ByFinalURL of an unknown URL called fn")
		return true
	}); err != nil {
		t.Error(err)
	}
}

// testByRelationTarget: every declared relation target finds at least
// the citations that declared it (a backend may detect more).
func testByRelationTarget(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	want := map[string][]string{}
	for _, r := range recs {
		for _, rel := range r.Relations {
			want[rel.Target] = append(want[rel.Target], r.ID())
		}
	}
	if len(want) == 0 {
		t.Fatal("the corpus has no relation")
	}
	for target, ids := range want {
		got, err := b.ByRelationTarget(context.Background(), target)
		if err != nil {
			t.Fatalf("ByRelationTarget(%q) = %v", target, err)
		}
		for _, id := range ids {
			if !slices.Contains(got, id) {
				t.Errorf("ByRelationTarget(%q) = %q, want %s among them", target, got, id)
			}
		}
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Errorf("ByRelationTarget(%q) = %q, want sorted without repeats", target, got)
		}
	}
}

// testView: reads inside a view answer as reads outside it.
func testView(t *testing.T, b store.Backend) {
	recs := Corpus(t)
	appendAll(t, b, recs...)
	ctx := context.Background()
	pol := normalize.Default()
	id := recs[0].ID()
	outside, err := b.Citations(ctx, pol.Digest(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	raws, err := b.ByRaw(ctx, *recs[0].RawURL)
	if err != nil {
		t.Fatal(err)
	}
	err = b.View(ctx, func(r store.Reader) error {
		for range 2 { // the second read answers from what the first read
			inside, err := r.Citations(ctx, pol.Digest(), []string{id})
			if err != nil {
				return err
			}
			if inside[0] == nil || inside[0].ID != outside[0].ID || inside[0].Raw != outside[0].Raw || inside[0].Norm.Key != outside[0].Norm.Key {
				t.Errorf("Citations inside a view = %+v, want %+v", inside[0], outside[0])
			}
			got, err := r.ByRaw(ctx, *recs[0].RawURL)
			if err != nil || !slices.Equal(got, raws) {
				t.Errorf("ByRaw inside a view = %q, %v; want %q", got, err, raws)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("View = %v", err)
	}
}
