package citestore

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestRunsReadWithoutProgressMarks holds the catalog's reads of runs
// (Runs, Policies) to the predicates they build from: a run's node
// gains a pg:linesWritten mark per committed batch, thousands in a large
// ingest, and every lineage reads the catalog. It also holds Node to
// reading such a node whole afterwards, so that the partial read never
// stands for the node.
func TestRunsReadWithoutProgressMarks(t *testing.T) {
	ctx := context.Background()
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const run, pol, marks = "https://example.org/run/1", "https://example.org/policy/1", 300
	quads := []graph.Quad{
		{S: iri(run), P: iri(vocab.RDFType), O: iri(vocab.IngestRun)},
		{S: iri(run), P: iri(vocab.ProvStartedAtTime), O: graph.Literal("2026-12-03T06:00:00Z", vocab.XSDDateTime)},
		{S: iri(run), P: iri(vocab.ProvUsed), O: iri(pol)},
		{S: iri(run), P: iri(vocab.RunStatus), O: graph.Literal("finished", "")},
		{S: iri(run), P: iri(vocab.InputDigest), O: graph.Literal("sha256:0", "")},
		{S: iri(pol), P: iri(vocab.RDFType), O: iri(vocab.NormalizationPolicy)},
		{S: iri(pol), P: iri(vocab.PolicyName), O: graph.Literal("p", "")},
		{S: iri(pol), P: iri(vocab.PolicyVersion), O: graph.Literal("1", "")},
		{S: iri(pol), P: iri(vocab.PolicyDigest), O: graph.Literal("sha256:1", "")},
		{S: iri(pol), P: iri(vocab.PolicyText), O: graph.Literal("name = \"p\"", "")},
	}
	for i := 1; i <= marks; i++ {
		quads = append(quads, graph.Quad{S: iri(run), P: iri(vocab.LinesWritten), O: graph.Literal(fmt.Sprint(i*1000), graph.XSDInteger)})
	}
	if _, err := g.Add(quads); err != nil {
		t.Fatal(err)
	}
	must(t, g.Read(func(r *graph.Reader) error {
		rd := NewReader(ctx, r)
		runs, err := rd.Runs()
		if err != nil {
			return err
		}
		want := store.Run{Node: run, Kind: "ingest", StartedAt: "2026-12-03T06:00:00Z", Status: store.RunStatus([]string{"finished"})}
		if len(runs) != 1 || fmt.Sprint(runs[0]) != fmt.Sprint(want) {
			t.Errorf("Runs = %+v, want [%+v]", runs, want)
		}
		pols, err := rd.Policies()
		if err != nil {
			return err
		}
		if len(pols) != 1 || pols[0].Node != pol || pols[0].LastRun.IsZero() || pols[0].Name != "p" {
			t.Errorf("Policies = %+v, want policy p last used by the run", pols)
		}
		if n := len(rd.facts[run]); n != len(runPreds) {
			t.Errorf("the run's facts after Runs and Policies: %d quads, want the %d of runPreds", n, len(runPreds))
		}
		if err := rd.Node(run); err != nil {
			return err
		}
		if got := len(rd.All(vocab.LinesWritten, run)); got != marks {
			t.Errorf("after Node, %d pg:linesWritten, want %d", got, marks)
		}
		if got := rd.One(vocab.InputDigest, run); got != "sha256:0" {
			t.Errorf("after Node, pg:inputDigest %q, want sha256:0", got)
		}
		return nil
	}))
}

// TestReaderReset holds reset to emptying every cache of a Reader that
// has read citations, as a fresh one has them, so that the view check's
// batches, which reuse one Reader, read each citation anew: a map added
// to Reader and left out of reset fails it.
func TestReaderReset(t *testing.T) {
	ctx := context.Background()
	s, g := viewStore(t)
	infos, err := s.Views(ctx)
	if err != nil || len(infos) != 1 {
		t.Fatalf("Views = %v, %v", infos, err)
	}
	must(t, g.Read(func(r *graph.Reader) error {
		rd := NewReader(ctx, r)
		if _, err := rd.Runs(); err != nil {
			return err
		}
		typ, cls := r.ID(iri(vocab.RDFType)), r.ID(citationClass)
		n := 0
		err := r.Subjects(ctx, typ, cls, func(id graph.ID) {
			if n++; n > 20 {
				return
			}
			c, err := rd.term(id)
			if err == nil {
				_, _, err = readRow(rd, c.Value, infos[0].Policy, true)
			}
			if err != nil {
				t.Errorf("readRow: %v", err)
			}
		})
		if err != nil {
			return err
		}
		if len(rd.facts) == 0 || len(rd.terms) == 0 {
			t.Fatalf("the Reader read nothing to empty")
		}
		rd.reset()
		v := reflect.ValueOf(rd).Elem()
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			switch f.Kind() {
			case reflect.Map, reflect.Slice:
				if f.Len() != 0 {
					t.Errorf("after reset, Reader.%s holds %d entries", name, f.Len())
				}
			case reflect.Bool:
				if f.Bool() {
					t.Errorf("after reset, Reader.%s is set", name)
				}
			case reflect.Interface:
				if !f.IsNil() && name == "err" {
					t.Errorf("after reset, Reader.err is %v", f)
				}
			}
		}
		return nil
	}))
}

// TestPredicatesFoundAmongTheNodes holds the reads of a node's facts by
// predicate (One, All and the reads built on them) to finding the
// predicate among the node's own, decoded, rather than by a lookup in the
// dictionary: a predicate the node lacks is not looked up at all (no id,
// not even 0, is noted for it), whether or not the store holds it
// elsewhere, and one it has is found with its facts.
func TestPredicatesFoundAmongTheNodes(t *testing.T) {
	ctx := context.Background()
	g, err := graph.Open(filepath.Join(t.TempDir(), "store.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	const a, b = "https://example.org/a", "https://example.org/b"
	if _, err := g.Add([]graph.Quad{
		{S: iri(a), P: iri(vocab.RDFType), O: iri(vocab.Citation)},
		{S: iri(a), P: iri(vocab.CitationId), O: graph.Literal("a-1", "")},
		{S: iri(a), P: iri(vocab.Position), O: graph.Literal("3", graph.XSDInteger)},
		{S: iri(b), P: iri(vocab.Question), O: graph.Literal("why?", "")},
	}); err != nil {
		t.Fatal(err)
	}
	must(t, g.Read(func(r *graph.Reader) error {
		rd := NewReader(ctx, r)
		must(t, rd.Node(a))
		if got := rd.One(vocab.CitationId, a); got != "a-1" {
			t.Errorf("One(citationId) = %q, want a-1", got)
		}
		if got := rd.All(vocab.Position, a); len(got) != 1 || got[0] != "3" {
			t.Errorf("All(position) = %q, want [3]", got)
		}
		for _, p := range []string{vocab.Question, vocab.HostRule} { // held by b; held by none
			if got := rd.One(p, a); got != "" {
				t.Errorf("One(%s) of a node without it = %q", p, got)
			}
			if _, looked := rd.idOf[p]; looked {
				t.Errorf("%s, which the node lacks, was looked up in the dictionary", p)
			}
		}
		return nil
	}))
}
