package graph_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

func TestAddIdempotent(t *testing.T) {
	s := newStore(t)
	batch := citations(0, 50)
	want := distinct(batch) // answers are shared, so the batch repeats quads
	if want == len(batch) {
		t.Fatal("test data has no repeated quads")
	}
	if n := mustAdd(t, s, batch...); n != want {
		t.Errorf("first Add() = %d, want %d distinct quads", n, want)
	}
	if n := mustAdd(t, s, batch...); n != 0 {
		t.Errorf("second Add() of the same batch = %d, want 0", n)
	}
	if got := mustCount(t, s); got != int64(want) {
		t.Errorf("Count() = %d, want %d", got, want)
	}
	// Overlapping batch: only the new citations count.
	more := citations(40, 60)
	wantMore := distinct(append(citations(0, 60), more...)) - want
	if n := mustAdd(t, s, more...); n != wantMore {
		t.Errorf("overlapping Add() = %d, want %d", n, wantMore)
	}
	if n, err := s.Add(nil); n != 0 || err != nil {
		t.Errorf("Add(nil) = %d, %v; want 0, nil", n, err)
	}
}

func TestAddInvalid(t *testing.T) {
	iri := graph.IRI("https://example.com/a")
	lit := graph.String("x")
	tests := []struct {
		name string
		bad  graph.Quad
		want string // in the reason
	}{
		{"zero subject", graph.Quad{P: iri, O: iri}, "subject is missing"},
		{"zero predicate", graph.Quad{S: iri, O: iri}, "predicate is missing"},
		{"zero object", graph.Quad{S: iri, P: iri}, "object is missing"},
		{"literal subject", graph.Quad{S: lit, P: iri, O: iri}, "subject must be an IRI or a blank node"},
		{"blank predicate", graph.Quad{S: iri, P: graph.Blank("b"), O: iri}, "predicate must be an IRI"},
		{"literal predicate", graph.Quad{S: iri, P: lit, O: iri}, "predicate must be an IRI"},
		{"literal graph", graph.Quad{S: iri, P: iri, O: iri, G: lit}, "graph must be an IRI or a blank node"},
		{"empty IRI", graph.Quad{S: graph.IRI(""), P: iri, O: iri}, "empty IRI"},
		{"empty blank", graph.Quad{S: graph.Blank(""), P: iri, O: iri}, "empty blank node label"},
		{"invalid UTF-8", graph.Quad{S: iri, P: iri, O: graph.String("a\xffb")}, "not valid UTF-8"},
		{"uppercase language", graph.Quad{S: iri, P: iri, O: graph.Term{Kind: graph.KindLiteral, Value: "x", Lang: "en-GB"}}, "language tag"},
		{"langString without tag", graph.Quad{S: iri, P: iri, O: graph.Literal("x", graph.RDFLangStr)}, "without a language tag"},
		{"tag with other datatype", graph.Quad{S: iri, P: iri, O: graph.Term{Kind: graph.KindLiteral, Value: "x", Datatype: graph.XSDString, Lang: "en"}}, "not rdf:langString"},
		{"IRI with datatype", graph.Quad{S: iri, P: iri, O: graph.Term{Kind: graph.KindIRI, Value: "a", Datatype: graph.XSDString}}, "IRI with a datatype"},
		{"unknown kind", graph.Quad{S: iri, P: iri, O: graph.Term{Kind: 9, Value: "a"}}, "unknown term kind 9"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			batch := append(citation(1), tt.bad)
			batch = append(batch, citation(2)...)
			n, err := s.Add(batch)
			var qerr *graph.QuadError
			if !errors.Is(err, graph.ErrInvalidQuad) || !errors.As(err, &qerr) {
				t.Fatalf("Add(%v) = %d, %v; want a *QuadError", tt.bad, n, err)
			}
			if qerr.Index != len(citation(1)) || qerr.Quad != tt.bad || !strings.Contains(qerr.Reason, tt.want) {
				t.Errorf("Add(%v) error = %v; want index %d and reason %q", tt.bad, err, len(citation(1)), tt.want)
			}
			if !strings.Contains(err.Error(), s.Path()) {
				t.Errorf("error %q does not name the file", err)
			}
			if got := mustCount(t, s); n != 0 || got != 0 {
				t.Errorf("after a rejected batch: added %d, Count() = %d; want 0, 0", n, got)
			}
		})
	}
}

// literalTests are terms that must come back exactly as given and stay
// distinct from each other. Cayley's typed values would merge the first
// two pairs (MODEL.md rule 3).
var literalTests = []struct {
	name string
	term graph.Term
}{
	{"dateTime +01:00", graph.Literal("2025-01-01T01:00:00+01:00", graph.XSDDateTime)},
	{"dateTime Z, same instant", graph.Literal("2025-01-01T00:00:00Z", graph.XSDDateTime)},
	{"integer 007", graph.Literal("007", graph.XSDInteger)},
	{"integer 7", graph.Literal("7", graph.XSDInteger)},
	{"integer +7", graph.Literal("+7", graph.XSDInteger)},
	{"string 7", graph.String("7")},
	{"integer that is not one", graph.Literal("seven", graph.XSDInteger)},
	{"boolean true", graph.Literal("true", graph.XSDBoolean)},
	{"boolean 1", graph.Literal("1", graph.XSDBoolean)},
	{"string", graph.String("https://example.com/a?b=c#d")},
	{"empty string", graph.String("")},
	{"lang", graph.LangString("colour", "en-GB")},
	{"lang other tag", graph.LangString("colour", "en")},
	{"same text no lang", graph.String("colour")},
	{"other datatype", graph.Literal("colour", "https://example.com/dt#word")},
	{"quotes, newlines, NUL, non-ASCII", graph.String("a \"quoted\"\n\r\tline\x00nul \\ café 日本 🙂")},
	{"escaped look-alike", graph.String(`a \"quoted\"\n\r\tline`)},
	{"backslash n", graph.String(`\n`)},
	{"newline", graph.String("\n")},
	{"looks like a typed literal", graph.String(`x"^^<http://www.w3.org/2001/XMLSchema#integer>`)},
	{"IRI with spaces", graph.IRI("https://example.com/a b<c>\"d")},
	{"IRI that looks like a literal", graph.IRI(`"7"^^<http://www.w3.org/2001/XMLSchema#integer>`)},
	{"relative IRI", graph.IRI("../x")},
	{"blank", graph.Blank("b0")},
	{"blank like an IRI", graph.Blank("https://example.com/a")},
}

func TestLiteralRoundTrip(t *testing.T) {
	s := newStore(t)
	subj := graph.IRI(pgid + "citation/0")
	pred := graph.IRI(pg + "value")
	var batch []graph.Quad
	for _, tt := range literalTests {
		batch = append(batch, graph.Quad{S: subj, P: pred, O: tt.term})
		if tt.term.Kind != graph.KindLiteral { // as subject too
			batch = append(batch, graph.Quad{S: tt.term, P: pred, O: graph.String(tt.name)})
		}
	}
	if n := mustAdd(t, s, batch...); n != len(batch) {
		t.Fatalf("Add() = %d, want %d: some terms were merged", n, len(batch))
	}
	objs, err := s.Objects(subj, pred)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[graph.Term]bool)
	for _, o := range objs {
		got[o] = true
	}
	for _, tt := range literalTests {
		if !got[tt.term] {
			t.Errorf("%s: %#v did not come back; got %v", tt.name, tt.term, objs)
		}
		ok, err := s.Has(graph.Quad{S: subj, P: pred, O: tt.term})
		if !ok || err != nil {
			t.Errorf("%s: Has = %v, %v; want true", tt.name, ok, err)
		}
		subjs, err := s.Subjects(pred, tt.term)
		if err != nil || len(subjs) != 1 || subjs[0] != subj {
			t.Errorf("%s: Subjects(pred, %v) = %v, %v; want [%v]", tt.name, tt.term, subjs, err, subj)
		}
		if tt.term.Kind != graph.KindLiteral {
			objs, err := s.Objects(tt.term, pred)
			if err != nil || len(objs) != 1 || objs[0] != graph.String(tt.name) {
				t.Errorf("%s as subject: Objects = %v, %v", tt.name, objs, err)
			}
		}
	}
	if len(objs) != len(literalTests) {
		t.Errorf("Objects() = %d terms, want %d", len(objs), len(literalTests))
	}
}

// TestLiteralDefaults checks the two forms Add fills in: a literal without
// a datatype is an xsd:string, and a language tag implies rdf:langString.
func TestLiteralDefaults(t *testing.T) {
	s := newStore(t)
	subj, pred := graph.IRI("https://example.com/s"), graph.IRI("https://example.com/p")
	tests := []struct {
		given, stored graph.Term
	}{
		{graph.Term{Kind: graph.KindLiteral, Value: "x"}, graph.String("x")},
		{graph.Literal("x", ""), graph.String("x")},
		{graph.Term{Kind: graph.KindLiteral, Value: "x", Lang: "fr"}, graph.LangString("x", "fr")},
	}
	for _, tt := range tests {
		mustAdd(t, s, graph.Quad{S: subj, P: pred, O: tt.given})
		ok, err := s.Has(graph.Quad{S: subj, P: pred, O: tt.stored})
		if !ok || err != nil {
			t.Errorf("Add(%#v): Has(%v) = %v, %v; want true", tt.given, tt.stored, ok, err)
		}
		ok, err = s.Has(graph.Quad{S: subj, P: pred, O: tt.given})
		if !ok || err != nil {
			t.Errorf("Has(%#v) = %v, %v; want true", tt.given, ok, err)
		}
	}
	if got := mustCount(t, s); got != 2 {
		t.Errorf("Count() = %d, want 2", got)
	}
}

// TestAddLargeBatch checks that a batch far larger than callers use is
// still counted exactly and deduplicated against what is stored.
func TestAddLargeBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("large batch")
	}
	s := newStore(t)
	first := citations(0, 500)
	if n := mustAdd(t, s, first...); n != distinct(first) {
		t.Errorf("Add() = %d, want %d", n, distinct(first))
	}
	second := citations(250, 1500)
	want := distinct(citations(0, 1500)) - distinct(first)
	if n := mustAdd(t, s, second...); n != want {
		t.Errorf("Add() = %d, want %d", n, want)
	}
	if got, want := mustCount(t, s), int64(distinct(citations(0, 1500))); got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
}

// TestConcurrent runs writers and readers together; run it with -race.
func TestConcurrent(t *testing.T) {
	s := newStore(t)
	const writers, batches, per = 2, 5, 20
	var wg sync.WaitGroup
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				from := (w*batches + b) * per
				if _, err := s.Add(citations(from, from+per)); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	for r := 0; r < 2; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				err := s.Match(context.Background(), graph.Quad{P: rdfType}, func(graph.Quad) error { return nil })
				if err != nil {
					t.Error(err)
				}
				if _, err := s.Count(); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got, want := mustCount(t, s), int64(distinct(citations(0, writers*batches*per))); got != want {
		t.Errorf("Count() = %d, want %d", got, want)
	}
}
