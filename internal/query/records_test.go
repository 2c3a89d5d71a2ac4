package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
)

// batches is a database filled a batch at a time: each step ingests some
// JSON Lines, or adds quads (evidence, as resolve does) to the citations
// it names.
type batches struct {
	t   *testing.T
	dir string
	st  *graph.Store
	n   int
}

func newBatches(t *testing.T) *batches {
	dir := t.TempDir()
	st, err := graph.Open(filepath.Join(dir, "b.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &batches{t: t, dir: dir, st: st}
}

// ingest stores lines and returns the ids of their citations.
func (b *batches) ingest(lines []string) []string {
	b.t.Helper()
	b.n++
	path := filepath.Join(b.dir, fmt.Sprintf("%d.jsonl", b.n))
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		b.t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), b.st, path, filepath.Base(path), ingest.Options{Policy: normalize.Default()}); err != nil {
		b.t.Fatal(err)
	}
	var ids []string
	for _, l := range lines {
		var rec struct {
			CitationID string `json:"citation_id"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			b.t.Fatal(err)
		}
		ids = append(ids, rec.CitationID)
	}
	return ids
}

// keysOf returns the keys of the citations with the given ids in v.
func keysOf(v *scanView, ids []string) []string {
	var keys []string
	for k, rows := range v.rows {
		for _, r := range rows {
			if slices.Contains(ids, r.CitationID) && !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

func recordsJSON(t *testing.T, rs []*query.GroupRecord) string {
	t.Helper()
	b, err := json.MarshalIndent(rs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// check refreshes rs after a step that changed the citations ids, and
// compares it with records built from the whole database, the counts by
// verdict with the report's, and the queue, a page of three at a time,
// with the groups the report lists under the defaults.
func (b *batches) check(name string, step int, maxShared int, ids []string, rs *query.MemRecords) {
	b.t.Helper()
	v := newScanView(b.t, b.st)
	if err := query.RefreshRecords(context.Background(), v, "", maxShared, keysOf(v, ids), rs); err != nil {
		b.t.Fatalf("%s step %d: %v", name, step, err)
	}
	b.compare(name, step, maxShared, rs, rs.All())
}

// scanOnly is a source without a grouping view: BuildRecords scans it.
type scanOnly struct {
	store.Catalog
	store.Scanner
}

// compare compares rs, whose records are all, with records built from
// the whole database (see check).
func (b *batches) compare(name string, step int, maxShared int, rs query.RecordStore, all []*query.GroupRecord) {
	t := b.t
	t.Helper()
	ctx := context.Background()
	want := query.NewMemRecords()
	cs := citestore.New(b.st)
	if err := query.BuildRecords(ctx, cs, "", maxShared, want); err != nil {
		t.Fatal(err)
	}
	// Built from the grouping view (a batch of keys at a time, spooled)
	// and from a scan of every citation: the same records.
	scanned := query.NewMemRecords()
	if err := query.BuildRecords(ctx, scanOnly{cs, cs}, "", maxShared, scanned); err != nil {
		t.Fatal(err)
	}
	if g, w := recordsJSON(t, want.All()), recordsJSON(t, scanned.All()); g != w {
		t.Errorf("%s step %d: records built from the view differ from those of a scan:\n%.4000s\nwant\n%.4000s", name, step, g, w)
		return
	}
	if g, w := recordsJSON(t, all), recordsJSON(t, want.All()); g != w {
		t.Errorf("%s step %d: refreshed records differ from built ones:\n%.4000s\nwant\n%.4000s", name, step, g, w)
		return
	}
	set, err := query.LoadGroups(ctx, citestore.New(b.st), "", query.GroupOptions{MaxShared: maxShared, MinSize: 2, Review: true})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := set.Report(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := rs.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for k, n := range rep.Counts {
		if (strings.HasPrefix(k, "verdict:") || k == "groups") && counts[k] != n {
			t.Errorf("%s step %d: %s: %d, the report %d", name, step, k, counts[k], n)
		}
	}
	var queued []string
	after := ""
	for {
		page, err := rs.Queue(ctx, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			queued = append(queued, r.ID)
		}
		after = page[len(page)-1].ID
	}
	var listed []string
	for _, g := range rep.Groups {
		listed = append(listed, g.ID)
	}
	if !slices.Equal(queued, listed) {
		t.Errorf("%s step %d: queue %v, the report lists %v", name, step, queued, listed)
	}
}

// TestRefreshRecordsMatchesBuild: records kept current batch by batch
// (RefreshRecords, from the grouping view and the keys each batch
// changed) equal records built from the whole database after every batch,
// and give the report's counts by verdict and its listed groups as the
// queue: on the corpus and synthetic data ingested in parts, and on
// batches that take a redirect target past --max-shared (splitting the
// group it made), join keys by a chain of redirects, give a group a
// smaller key (a new id), and add evidence to stored citations.
func TestRefreshRecordsMatchesBuild(t *testing.T) {
	split := func(lines []string, parts int) [][]string {
		out := make([][]string, parts)
		for i, l := range lines {
			if l != "" {
				out[i%parts] = append(out[i%parts], l)
			}
		}
		return out
	}
	corpus, err := os.ReadFile("testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var syn bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 40}).Write(&syn, 600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		lines     []string
		parts     int
		maxShared int
	}{
		{"corpus", strings.Split(string(corpus), "\n"), 3, 0},
		{"corpus, max-shared 1", strings.Split(string(corpus), "\n"), 4, 1},
		{"synthetic", strings.Split(syn.String(), "\n"), 4, 2},
	} {
		b := newBatches(t)
		rs := query.NewMemRecords()
		for i, part := range split(c.lines, c.parts) {
			b.check(c.name, i, c.maxShared, b.ingest(part), rs)
		}
	}

	// Thresholds, joins, ids and evidence, under --max-shared 2.
	b := newBatches(t)
	rs := query.NewMemRecords()
	steps := thresholdSteps()
	for i, s := range steps {
		b.check("thresholds", i, 2, b.ingest(s), rs)
	}
	// Evidence added to stored citations, as resolve and extract add it.
	snap, err := query.Load(context.Background(), citestore.New(b.st), "")
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := citestore.NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range evidenceSteps {
		var quads []graph.Quad
		var ids []string
		for _, c := range snap.Citations {
			if e, ok := ex[c.ID]; ok {
				quads, _ = mapper.ExtractionQuads(quads, graph.IRI(c.Retrievals[0].Node), e)
				ids = append(ids, c.ID)
			}
		}
		if _, err := b.st.Add(quads); err != nil {
			t.Fatal(err)
		}
		// The quads were added bare: the view is made current again as
		// extract keeps it, for BuildRecords to read.
		if _, err := citestore.New(b.st).RebuildView(context.Background(), snap.Policy.Digest, 0, nil); err != nil {
			t.Fatal(err)
		}
		b.check("thresholds, evidence", i, 2, ids, rs)
	}
}

// BenchmarkRefreshRecords refreshes the records of a synthetic store for
// batches of 100 keys (what a batch of new citations gives), from a
// grouping view held in memory; affected/op is how many keys the seeds'
// neighbourhoods reached.
func BenchmarkRefreshRecords(b *testing.B) {
	ctx := context.Background()
	st := synthStore(b, 3000)
	v := newScanView(b, st)
	rs := query.NewMemRecords()
	if err := query.BuildRecords(ctx, citestore.New(st), "", 0, rs); err != nil {
		b.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range v.rows {
			if !yield(k) {
				return
			}
		}
	})
	reads := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		var seeds []string
		for j := range 100 {
			seeds = append(seeds, keys[(i*100+j*37)%len(keys)])
		}
		v.keyReads = 0
		if err := query.RefreshRecords(ctx, v, "", 0, seeds, rs); err != nil {
			b.Fatal(err)
		}
		reads += v.keyReads
	}
	b.ReportMetric(float64(reads)/float64(b.N), "keyreads/op")
}

// TestRecordStoreContract runs the RecordStore contract on MemRecords
// (citestore's test runs it on the bbolt store).
func TestRecordStoreContract(t *testing.T) {
	storetest.RecordStoreContract(t, func(*testing.T) query.RecordStore { return query.NewMemRecords() })
}

// TestKeptRecordsMatchBuild is TestRefreshRecordsMatchesBuild on the
// records kept in the database file (citestore.Records): built after the
// first batch, then kept current by the dirty keys each batch's view
// write records and KeepRecords at the end of it, as the commands do. The
// records equal those built from the whole database after every batch,
// and a batch that changes nothing leaves them as they are.
func TestKeptRecordsMatchBuild(t *testing.T) {
	ctx := context.Background()
	corpus, err := os.ReadFile("testdata/corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var syn bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 40}).Write(&syn, 600); err != nil {
		t.Fatal(err)
	}
	digest := normalize.Default().Digest()
	for _, c := range []struct {
		name      string
		lines     []string
		parts     int
		maxShared int
	}{
		{"corpus", strings.Split(string(corpus), "\n"), 3, 0},
		{"corpus, max-shared 1", strings.Split(string(corpus), "\n"), 4, 1},
		{"synthetic", strings.Split(syn.String(), "\n"), 4, 2},
	} {
		b := newBatches(t)
		cs := citestore.New(b.st)
		rs := cs.Records(digest, c.maxShared)
		var parts [][]string
		for i, l := range c.lines {
			if l != "" {
				for len(parts) <= i%c.parts {
					parts = append(parts, nil)
				}
				parts[i%c.parts] = append(parts[i%c.parts], l)
			}
		}
		for i, part := range parts {
			b.ingest(part)
			if i == 0 {
				if _, err := service.BuildRecordsOf(ctx, b.st, digest, c.maxShared); err != nil {
					t.Fatal(err)
				}
			} else {
				notes, err := service.KeepRecordsOf(ctx, b.st)
				if err != nil {
					t.Fatal(err)
				}
				if len(notes) != 1 || !notes[0].Refreshed || notes[0].Dirty == 0 {
					t.Fatalf("%s step %d: KeepRecords: %+v, want one refresh", c.name, i, notes)
				}
			}
			all, err := rs.All(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b.compare(c.name+" (kept)", i, c.maxShared, rs, all)
		}
		// The same file again adds nothing: no key is dirty.
		b.ingest(parts[len(parts)-1])
		if notes, err := service.KeepRecordsOf(ctx, b.st); err != nil || len(notes) != 0 {
			t.Errorf("%s: KeepRecordsOf after an ingest that added nothing: %+v, %v", c.name, notes, err)
		}
	}

	// Thresholds, joins, ids, and evidence added by resolve's and
	// extract's write (citestore.WriteViewRows), under --max-shared 2.
	b := newBatches(t)
	keep := func(what string, i int) {
		t.Helper()
		notes, err := service.KeepRecordsOf(ctx, b.st)
		if err != nil || len(notes) != 1 || !notes[0].Refreshed {
			t.Fatalf("%s step %d: KeepRecordsOf: %+v, %v, want one refresh", what, i, notes, err)
		}
		rs := citestore.New(b.st).Records(digest, 2)
		all, err := rs.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b.compare(what+" (kept)", i, 2, rs, all)
	}
	for i, s := range thresholdSteps() {
		b.ingest(s)
		if i == 0 {
			if _, err := service.BuildRecordsOf(ctx, b.st, digest, 2); err != nil {
				t.Fatal(err)
			}
			continue
		}
		keep("thresholds", i)
	}
	snap, err := query.Load(ctx, citestore.New(b.st), "")
	if err != nil {
		t.Fatal(err)
	}
	mapper, err := citestore.NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	for i, ex := range evidenceSteps {
		var quads []graph.Quad
		var cits []graph.Term
		for _, c := range snap.Citations {
			if e, ok := ex[c.ID]; ok {
				quads, _ = mapper.ExtractionQuads(quads, graph.IRI(c.Retrievals[0].Node), e)
				cits = append(cits, graph.IRI(c.Node))
			}
		}
		if _, err := b.st.AddWith(quads, func(w *graph.Writer) error { return citestore.WriteViewRows(ctx, w, cits) }); err != nil {
			t.Fatal(err)
		}
		keep("thresholds, evidence", i)
	}
}

// TestRecordsIncomplete: records without their marker (a build or refresh
// killed midway) are not used, and KeepRecordsOf drops them and says why.
func TestRecordsIncomplete(t *testing.T) {
	ctx := context.Background()
	b := newBatches(t)
	b.ingest([]string{`{"citation_id":"a","engine":"e","answer_id":"x","position":1,"observed_at":"2026-11-10T10:00:00Z","raw_url":"https://a.test/"}`})
	digest := normalize.Default().Digest()
	rs := citestore.New(b.st).Records(digest, 0)
	if err := rs.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rs.Put(ctx, &query.GroupRecord{ID: "g-a", Key: "k", Keys: []string{"k"}, Members: 1}); err != nil {
		t.Fatal(err)
	}
	if err := rs.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	exists, complete, _, err := rs.State(ctx)
	if err != nil || !exists || complete {
		t.Fatalf("State: %v %v %v, want records without their marker", exists, complete, err)
	}
	notes, err := service.KeepRecordsOf(ctx, b.st)
	if err != nil || len(notes) != 1 || notes[0].Refreshed || notes[0].Why == "" {
		t.Fatalf("KeepRecordsOf: %+v, %v: want the incomplete records dropped", notes, err)
	}
	if exists, _, _, _ := rs.State(ctx); exists {
		t.Fatal("KeepRecordsOf left incomplete records")
	}
}

// thresholdSteps are batches that take a redirect target past
// --max-shared 2, join keys by a chain of redirects and give a group a
// smaller key; evidenceSteps then add extractions to their citations.
func thresholdSteps() [][]string {
	line := func(id, raw, final, hash string) string {
		ret := map[string]any{"final_status": 200}
		if hash != "" {
			ret["content_hash"] = hash
		}
		if final != "" {
			ret["hops"] = []map[string]any{{"from": raw, "to": final, "status": 301}}
			ret["final_url"] = final
		}
		bs, _ := json.Marshal(map[string]any{"citation_id": id, "engine": "e", "answer_id": "a", "position": 1,
			"observed_at": "2026-11-10T10:00:00Z", "raw_url": raw, "retrieval": ret})
		return string(bs)
	}
	return [][]string{
		{line("h1", "https://hub.test/p1", "https://hub.test/landing", "sha256:hub"), line("h2", "https://hub.test/p2", "https://hub.test/landing", ""),
			line("j1", "https://join.test/a", "https://join.test/b", ""), line("d1", "https://d1.test/x", "", "sha256:d1"), line("s1", "https://s1.test/x", "", "sha256:s1"),
			line("o1", "https://other.test/x", "", "sha256:hub")},
		{line("h3", "https://hub.test/p3", "https://hub.test/landing", ""), line("j2", "https://join.test/b", "", ""), line("d2", "https://d2.test/y", "", "sha256:d2")},
		{line("j3", "https://join.test/c", "https://join.test/a", ""), line("j0", "https://join.test/0", "https://join.test/b", ""), line("s2", "https://s2.test/y", "", "sha256:s2")},
	}
}

var evidenceSteps = []map[string]model.Extraction{
	{"d1": {Extractor: "x/1", TextDigest: "sha256:same", SimHash: "0000000000000000"}, "s1": {Extractor: "x/1", TextDigest: "sha256:one", SimHash: "0123456789abcdef"}},
	{"d2": {Extractor: "x/1", TextDigest: "sha256:same", SimHash: "ffffffffffffffff"}, "s2": {Extractor: "x/1", TextDigest: "sha256:two", SimHash: "0123456789abcdee"}},
}

// TestDirtyKeysCapped: the keys an ingest changes are marked on the kept
// records only up to one past the number they may be refreshed with
// (citestore.DirtyLimit), however many more the ingest changes, and the
// records are then dropped, not refreshed, saying why.
func TestDirtyKeysCapped(t *testing.T) {
	ctx := context.Background()
	var syn bytes.Buffer
	if err := synth.New(synth.Options{Seed: 11, Sites: 3000}).Write(&syn, 2600); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(syn.String()), "\n")
	digest := normalize.Default().Digest()
	b := newBatches(t)
	b.ingest(lines[:40])
	if _, err := service.BuildRecordsOf(ctx, b.st, digest, 0); err != nil {
		t.Fatal(err)
	}
	rs := citestore.New(b.st).Records(digest, 0)
	counts, err := rs.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	limit := citestore.DirtyLimit(int(counts["groups"]))
	if limit != citestore.RefreshMinDirty {
		t.Fatalf("DirtyLimit(%d groups) = %d, want %d", counts["groups"], limit, citestore.RefreshMinDirty)
	}
	b.ingest(lines[40:])
	keys, err := rs.DirtyKeys(ctx, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != limit+1 {
		t.Fatalf("%d dirty keys marked after an ingest of %d citations, want %d (one past the limit)", len(keys), len(lines)-40, limit+1)
	}
	notes, err := service.KeepRecordsOf(ctx, b.st)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 1 || notes[0].Refreshed || !strings.Contains(notes[0].Why, "more than 1000 keys changed") {
		t.Fatalf("KeepRecordsOf = %+v, want the records dropped as past refreshing", notes)
	}
}
