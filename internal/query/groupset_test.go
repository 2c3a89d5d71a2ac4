package query_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/synth"
	"github.com/provgraph/provgraph/internal/vocab"
)

// synthStore ingests n synthetic citations over few sites (so that many
// citations share keys, redirects and canonicals) into a fresh store.
func synthStore(t testing.TB, n int) *graph.Store {
	t.Helper()
	var in bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 40}).Write(&in, n); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := graph.Open(filepath.Join(dir, "s.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	path := filepath.Join(dir, "synth.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, path, "synth.jsonl", ingest.Options{Policy: normalize.Default()}); err != nil {
		t.Fatal(err)
	}
	return st
}

func reportJSON(t *testing.T, rep *query.Report) string {
	t.Helper()
	b, err := json.MarshalIndent(rep, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLoadGroupsMatchesGroups: the groups found from a database's ids
// (LoadGroups, which builds members only while writing them) are exactly
// the groups of the loaded snapshot, under every option, and writing them
// in batches gives the listed groups in order.
func TestLoadGroupsMatchesGroups(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*graph.Store{
		"corpus":          corpusStore(t, "default"),
		"corpus, 2 rules": corpusStore(t, "default", "testdata/hostrules.toml"),
		"synthetic":       synthStore(t, 3000),
	}
	options := []query.GroupOptions{
		{},
		{MinSize: 2},
		{MinSize: 3, Verdict: model.VerdictNeedsContentCheck},
		{Verdict: model.VerdictConflict},
		{MaxShared: 1},
		{MinSize: 1000},
		{MinSize: 2, Review: true},
		{MinSize: 3, Verdict: model.VerdictNormalizedCompare, Review: true},
	}
	for name, st := range stores {
		snap, err := query.Load(ctx, citestore.New(st), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range options {
			want := query.Groups(snap, opts)
			set, err := query.LoadGroups(ctx, citestore.New(st), "", opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := set.Report(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
				t.Errorf("%s %+v: LoadGroups differs from Groups(Load):\n%.3000s\nwant\n%.3000s", name, opts, g, w)
				continue
			}
			if opts == (query.GroupOptions{}) && len(want.Groups) < 3 {
				t.Fatalf("%s: only %d groups", name, len(want.Groups))
			}
			var streamed, whole bytes.Buffer
			for _, g := range want.Groups {
				b, _ := json.Marshal(g)
				whole.Write(append(b, '\n'))
			}
			rest, err := set.Write(ctx, func(buf []byte, g *query.Group) []byte {
				b, _ := json.Marshal(g)
				return append(append(buf, b...), '\n')
			}, func(p []byte) error {
				streamed.Write(p)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if streamed.String() != whole.String() {
				t.Errorf("%s %+v: written groups differ from the report's", name, opts)
			}
			if len(rest.Groups) != 0 || reportJSON(t, &query.Report{Counts: rest.Counts, Rejected: rest.Rejected, Missing: rest.Missing}) != reportJSON(t, &query.Report{Counts: want.Counts, Rejected: want.Rejected, Missing: want.Missing}) {
				t.Errorf("%s %+v: Write's report differs from the report without its groups", name, opts)
			}
		}
	}
}

// TestWriteInTasks writes the groups as tasks of one group each (many more
// tasks than the workers may have taken and not yet written): they come
// out in order; a write that fails, or a context cancelled, stops Write
// with that error.
func TestWriteInTasks(t *testing.T) {
	defer query.SetGroupsPerTask(1)()
	ctx := context.Background()
	st := synthStore(t, 3000)
	snap, err := query.Load(ctx, citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	want := query.Groups(snap, query.GroupOptions{MinSize: 1})
	if len(want.Groups) < 100 {
		t.Fatalf("only %d groups", len(want.Groups))
	}
	set, err := query.LoadGroups(ctx, citestore.New(st), "", query.GroupOptions{MinSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	encode := func(buf []byte, g *query.Group) []byte { return append(append(buf, g.ID...), '\n') }
	var whole bytes.Buffer
	for _, g := range want.Groups {
		whole.WriteString(g.ID + "\n")
	}
	var got bytes.Buffer
	writes := 0
	if _, err := set.Write(ctx, encode, func(p []byte) error {
		writes++
		got.Write(p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got.String() != whole.String() || writes != len(want.Groups) {
		t.Errorf("%d writes of %d bytes; want %d writes, the groups in order (%d bytes)", writes, got.Len(), len(want.Groups), whole.Len())
	}

	boom := errors.New("disk full")
	writes = 0
	_, err = set.Write(ctx, encode, func([]byte) error {
		if writes++; writes == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) || writes != 5 {
		t.Errorf("failing write: Write = %v after %d writes, want %v after 5", err, writes, boom)
	}

	cctx, cancel := context.WithCancel(ctx)
	writes = 0
	_, err = set.Write(cctx, encode, func([]byte) error {
		if writes++; writes == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || writes != 3 {
		t.Errorf("cancelled: Write = %v after %d writes, want %v after 3", err, writes, context.Canceled)
	}
}

// TestRowFactsMatchLoader: grouping on the facts a backend's scan rows
// give (store.Row: key, rejection, host-rule flag, same-host redirects,
// relation flag, content evidence) finds the same report, byte for byte,
// as grouping on the facts of a snapshot's citations (which Load builds
// with the scan's Texts.Citations): the rows carry everything grouping
// compares.
func TestRowFactsMatchLoader(t *testing.T) {
	ctx := context.Background()
	stores := map[string]*graph.Store{
		"corpus":           corpusStore(t, "default"),
		"corpus, 2 rules":  corpusStore(t, "default", "testdata/hostrules.toml"),
		"synthetic":        synthStore(t, 3000),
		"with extractions": extractedStore(t),
	}
	options := []query.GroupOptions{
		{}, {MinSize: 2}, {Verdict: model.VerdictConflict}, {MaxShared: 1}, {MinSize: 2, Review: true},
	}
	for name, st := range stores {
		snap, err := query.Load(ctx, citestore.New(st), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, opts := range options {
			want := query.Groups(snap, opts)
			got, err := query.GroupsFromScan(ctx, citestore.New(st), snap, opts)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := reportJSON(t, got), reportJSON(t, want); g != w {
				t.Errorf("%s %+v: groups from scan rows differ from the loader's:\n%.3000s\nwant\n%.3000s", name, opts, g, w)
			}
		}
	}
}

// extractedStore is the synthetic store with content evidence on its
// retrievals, as resolve records it (citestore.Mapper): text digests
// shared by pairs of retrievals, SimHashes near within triples and far
// across them, a second
// extraction by a newer extractor on some, a soft error on others, and
// passage checks of the citations against the current extraction, the
// superseded one or both.
func extractedStore(t testing.TB) *graph.Store {
	t.Helper()
	ctx := context.Background()
	st := synthStore(t, 2000)
	var rets []graph.Term
	if err := st.Read(func(r *graph.Reader) error {
		return r.Match(ctx, graph.Quad{P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.Retrieval)}, func(q graph.Quad) error {
			rets = append(rets, q.S)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if len(rets) < 50 {
		t.Fatalf("only %d retrievals", len(rets))
	}
	mapper, err := citestore.NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	citsOf := map[string][]graph.Term{}
	if err := st.Read(func(r *graph.Reader) error {
		return r.Match(ctx, graph.Quad{P: graph.IRI(vocab.RetrievedIn)}, func(q graph.Quad) error {
			citsOf[q.O.Value] = append(citsOf[q.O.Value], q.S)
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	var quads []graph.Quad
	// check adds passage checks of the citations retrieved in ret
	// against the evidence ev, on some retrievals.
	check := func(i int, ret, ev graph.Term) {
		if i%4 != 0 && i%6 != 2 {
			return
		}
		for _, c := range citsOf[ret.Value] {
			quads = mapper.PassageQuads(quads, c, ev, model.PassageCheck{Found: i%8 == 0, Score: float64(i%10) / 10, Method: "window", Start: i, End: i + 9})
		}
	}
	for i, ret := range rets {
		ex := model.Extraction{Extractor: "x/1", TextDigest: fmt.Sprintf("sha256:%d", i/2), SimHash: fmt.Sprintf("%016x", uint64(i/3+1)*0x9e3779b97f4a7c15^uint64(i%3)<<(i%5))}
		var ev graph.Term
		switch i % 6 {
		case 1:
			ex.SoftError = "not-found"
		case 2:
			quads, ev = mapper.ExtractionQuads(quads, ret, ex)
			check(i, ret, ev) // against the superseded extraction
			ex = model.Extraction{Extractor: "x/2", TextDigest: fmt.Sprintf("sha256:new%d", i/4)}
		case 3:
			ex.SimHash = ""
		}
		quads, ev = mapper.ExtractionQuads(quads, ret, ex)
		if i%12 != 2 {
			check(i, ret, ev)
		}
	}
	if _, err := st.Add(quads); err != nil {
		t.Fatal(err)
	}
	return st
}
