package graph_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// A small graph with every position varying: two subjects, two predicates,
// an object shared by both subjects, quads in the default graph and in two
// named graphs, and the same triple in two graphs.
var (
	mA, mB   = graph.IRI("https://example.com/a"), graph.Blank("b")
	mP, mQ   = graph.IRI("https://example.com/p"), graph.IRI("https://example.com/q")
	mX       = graph.IRI("https://example.com/x")
	mLit     = graph.Literal("007", graph.XSDInteger)
	mG1, mG2 = graph.IRI("https://example.com/g1"), graph.Blank("g2")

	matchData = []graph.Quad{
		{S: mA, P: mP, O: mX},                // 0
		{S: mA, P: mP, O: mLit},              // 1
		{S: mA, P: mQ, O: mX},                // 2
		{S: mB, P: mP, O: mX},                // 3
		{S: mB, P: mQ, O: mLit, G: mG1},      // 4
		{S: mB, P: mQ, O: mLit, G: mG2},      // 5
		{S: mA, P: mP, O: mX, G: mG1},        // 6: quad 0 in g1
		{S: mX, P: mP, O: mA},                // 7
		{S: mA, P: rdfType, O: mX, G: mG2},   // 8
		{S: mB, P: rdfType, O: mLit, G: mG2}, // 9
	}
)

func TestMatch(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, matchData...)
	unknown := graph.IRI("https://example.com/unknown")
	tests := []struct {
		pattern graph.Quad
		want    []int // indexes into matchData
	}{
		{graph.Quad{}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{graph.Quad{S: mA}, []int{0, 1, 2, 6, 8}},
		{graph.Quad{S: mB}, []int{3, 4, 5, 9}},
		{graph.Quad{P: mP}, []int{0, 1, 3, 6, 7}},
		{graph.Quad{P: mQ}, []int{2, 4, 5}},
		{graph.Quad{O: mX}, []int{0, 2, 3, 6, 8}},
		{graph.Quad{O: mLit}, []int{1, 4, 5, 9}},
		{graph.Quad{O: mA}, []int{7}},
		{graph.Quad{G: mG1}, []int{4, 6}},
		{graph.Quad{G: mG2}, []int{5, 8, 9}},
		{graph.Quad{S: mA, P: mP}, []int{0, 1, 6}},
		{graph.Quad{S: mA, O: mX}, []int{0, 2, 6, 8}},
		{graph.Quad{P: mP, O: mX}, []int{0, 3, 6}},
		{graph.Quad{S: mA, P: mP, O: mX}, []int{0, 6}},
		{graph.Quad{S: mA, P: mP, O: mX, G: mG1}, []int{6}},
		{graph.Quad{S: mB, G: mG2}, []int{5, 9}},
		{graph.Quad{P: rdfType, G: mG2}, []int{8, 9}},
		{graph.Quad{S: mA, P: mP, O: mX, G: mG2}, nil},
		{graph.Quad{S: unknown}, nil},
		{graph.Quad{P: unknown}, nil},
		{graph.Quad{O: unknown, P: mP}, nil},
		{graph.Quad{S: mLit}, nil},                                 // a literal is never a subject
		{graph.Quad{P: mB}, nil},                                   // nor a blank node a predicate
		{graph.Quad{O: graph.Literal("7", graph.XSDInteger)}, nil}, // "007" is not "7"
	}
	for _, tt := range tests {
		var want []string
		for _, i := range tt.want {
			want = append(want, matchData[i].String())
		}
		slices.Sort(want)
		if got := all(t, s, tt.pattern); !slices.Equal(got, want) {
			t.Errorf("Match(%v) =\n\t%q\nwant\n\t%q", tt.pattern, got, want)
		}
	}
}

func TestHas(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, matchData...)
	tests := []struct {
		q    graph.Quad
		want bool
	}{
		{matchData[0], true},
		{matchData[6], true},
		{graph.Quad{S: mA, P: mP, O: mX, G: mG2}, false}, // other graph
		{graph.Quad{S: mB, P: mQ, O: mLit}, false},       // stored only in g1, g2
		{graph.Quad{S: mX, P: mP, O: mX}, false},
		{graph.Quad{S: mA, P: mP}, false},          // not a quad
		{graph.Quad{S: mLit, P: mP, O: mX}, false}, // not a valid quad
	}
	for _, tt := range tests {
		if got, err := s.Has(tt.q); got != tt.want || err != nil {
			t.Errorf("Has(%v) = %v, %v; want %v", tt.q, got, err, tt.want)
		}
	}
}

func TestObjectsSubjects(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, matchData...)
	objs, err := s.Objects(mA, mP)
	if err != nil {
		t.Fatal(err)
	}
	// quad 6 repeats quad 0's triple in another graph: one object
	if want := []graph.Term{mX, mLit}; !slices.Equal(objs, want) {
		t.Errorf("Objects(a, p) = %v, want %v", objs, want)
	}
	subjs, err := s.Subjects(mQ, mLit)
	if err != nil {
		t.Fatal(err)
	}
	if want := []graph.Term{mB}; !slices.Equal(subjs, want) {
		t.Errorf("Subjects(q, 007) = %v, want %v", subjs, want)
	}
	none, err := s.Objects(mX, mQ)
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("Objects(x, q) = %#v, %v; want an empty, non-nil slice", none, err)
	}
}

func TestMatchFnError(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, citations(0, 30)...)
	stop := fmt.Errorf("enough")
	calls := 0
	err := s.Match(context.Background(), graph.Quad{}, func(graph.Quad) error {
		calls++
		if calls == 3 {
			return stop
		}
		return nil
	})
	if err != stop || calls != 3 {
		t.Errorf("Match with a failing fn = %v after %d calls, want %v after 3", err, calls, stop)
	}
}

func TestMatchCanceled(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, citations(0, 30)...)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Match(ctx, graph.Quad{}, func(graph.Quad) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Match with a canceled context = %v, want context.Canceled", err)
	}
	if err := s.Check(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Check with a canceled context = %v, want context.Canceled", err)
	}
}

func TestMatchInvalidPattern(t *testing.T) {
	s := newStore(t)
	err := s.Match(context.Background(), graph.Quad{O: graph.Term{Kind: graph.KindLiteral, Value: "x", Lang: "EN"}},
		func(graph.Quad) error { return nil })
	if !errors.Is(err, graph.ErrInvalidQuad) {
		t.Errorf("Match(bad language tag) = %v, want ErrInvalidQuad", err)
	}
}

// TestQuadsIn splits a pass over every quad into subject ranges read on
// goroutines of their own: the ranges together give exactly what Quads
// gives, in the same order, and each range only its own subjects.
func TestQuadsIn(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, citations(0, 300)...)
	type spo [3]graph.ID
	err := s.Read(func(r *graph.Reader) error {
		ctx := context.Background()
		var want []spo
		if err := r.Quads(ctx, func(s, p, o graph.ID) { want = append(want, spo{s, p, o}) }); err != nil {
			return err
		}
		if len(want) == 0 {
			t.Fatal("Quads read nothing")
		}
		max := r.MaxID()
		for _, parts := range []int{1, 2, 3, 7} {
			got := make([][]spo, parts)
			errs := make([]error, parts)
			done := make(chan int)
			for i := range parts {
				from, to := 1+max*graph.ID(i)/graph.ID(parts), 1+max*graph.ID(i+1)/graph.ID(parts)
				go func() {
					errs[i] = r.QuadsIn(ctx, from, to, func(s, p, o graph.ID) {
						if s < from || s >= to {
							t.Errorf("QuadsIn(%d, %d) gave subject %d", from, to, s)
						}
						got[i] = append(got[i], spo{s, p, o})
					})
					done <- i
				}()
			}
			for range parts {
				<-done
			}
			for _, err := range errs {
				if err != nil {
					return err
				}
			}
			if all := slices.Concat(got...); !slices.Equal(all, want) {
				t.Errorf("%d ranges: %d quads, want the %d of Quads in the same order", parts, len(all), len(want))
			}
		}
		var none int
		if err := r.QuadsIn(ctx, 5, 5, func(graph.ID, graph.ID, graph.ID) { none++ }); err != nil || none != 0 {
			t.Errorf("empty range: %d quads, %v", none, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestValues checks that Values gives, for every id, the value Terms
// gives, on a store with every kind of term.
func TestValues(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, citations(0, 50)...)
	mustAdd(t, s,
		graph.Quad{S: graph.IRI("https://example.org/s"), P: graph.IRI("https://example.org/p"), O: graph.LangString("colour", "en-gb")},
		graph.Quad{S: graph.Blank("b1"), P: graph.IRI("https://example.org/p"), O: graph.Literal("1.50", "http://www.w3.org/2001/XMLSchema#decimal")},
		graph.Quad{S: graph.IRI("https://w3id.org/provgraph/id/raw/0123456789abcdef0123456789abcdef"), P: graph.IRI("https://example.org/p"), O: graph.Literal("007", graph.XSDInteger)},
	)
	err := s.Read(func(r *graph.Reader) error {
		ctx := context.Background()
		var ids []graph.ID
		for id := graph.ID(1); id <= r.MaxID(); id++ {
			ids = append(ids, id)
		}
		want := map[graph.ID]string{}
		if err := r.Terms(ctx, ids, func(id graph.ID, t graph.Term) error {
			want[id] = t.Value
			return nil
		}); err != nil {
			return err
		}
		got := map[graph.ID]string{}
		if err := r.Values(ctx, ids, func(id graph.ID, v []byte) error {
			got[id] = string(v)
			return nil
		}); err != nil {
			return err
		}
		if len(want) != len(ids) || !maps.Equal(got, want) {
			t.Errorf("Values gave %d values, Terms %d of %d ids; they differ: %v", len(got), len(want), len(ids), !maps.Equal(got, want))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDescribeIncoming: Reader.Describe and Reader.Incoming give, by id,
// the predicates and objects of a subject's quads and the subjects and
// predicates of the quads into an object, as Match with that subject or
// object does, in every graph, repeats across graphs included, in the
// order of SPO and OSP.
func TestDescribeIncoming(t *testing.T) {
	s := newStore(t)
	mustAdd(t, s, matchData...)
	ctx := context.Background()
	err := s.Read(func(r *graph.Reader) error {
		name := func(id graph.ID) string {
			tm, err := r.Term(id)
			if err != nil {
				t.Fatal(err)
			}
			return tm.String()
		}
		for _, n := range []graph.Term{mA, mB, mX, mLit, mP} {
			var want, got []string
			if err := s.Match(ctx, graph.Quad{S: n}, func(q graph.Quad) error {
				want = append(want, q.P.String()+" "+q.O.String())
				return nil
			}); err != nil {
				return err
			}
			var pos [][2]graph.ID
			if err := r.Describe(ctx, r.ID(n), func(p, o graph.ID) { pos = append(pos, [2]graph.ID{p, o}) }); err != nil {
				return err
			}
			if !slices.IsSortedFunc(pos, cmpPair) {
				t.Errorf("Describe(%v) = %v, not in predicate, object order", n, pos)
			}
			for _, po := range pos {
				got = append(got, name(po[0])+" "+name(po[1]))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("Describe(%v) = %q, want %q", n, got, want)
			}
			want, got = nil, nil
			if err := s.Match(ctx, graph.Quad{O: n}, func(q graph.Quad) error {
				want = append(want, q.S.String()+" "+q.P.String())
				return nil
			}); err != nil {
				return err
			}
			var ids [][2]graph.ID
			if err := r.Incoming(ctx, r.ID(n), func(s, p graph.ID) { ids = append(ids, [2]graph.ID{s, p}) }); err != nil {
				return err
			}
			if !slices.IsSortedFunc(ids, cmpPair) {
				t.Errorf("Incoming(%v) = %v, not in subject, predicate order", n, ids)
			}
			for _, sp := range ids {
				got = append(got, name(sp[0])+" "+name(sp[1]))
			}
			slices.Sort(want)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("Incoming(%v) = %q, want %q", n, got, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func cmpPair(a, b [2]graph.ID) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) }
