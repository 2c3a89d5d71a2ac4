package graph

import (
	"context"
	"path/filepath"
	"testing"

	ckv "github.com/cayleygraph/cayley/graph/kv"
	"github.com/cayleygraph/quad"
)

// TestCayleyTypedValuesMerge records why convert.go never uses cayley's
// typed values: parsing a typed literal normalizes it, so distinct evidence
// would become one node (MODEL.md rule 3).
func TestCayleyTypedValuesMerge(t *testing.T) {
	parse := func(lexical, datatype string) quad.Value {
		t.Helper()
		v, err := quad.TypedString{Value: quad.String(lexical), Type: quad.IRI(datatype)}.ParseValue()
		if err != nil {
			t.Fatalf("ParseValue(%q): %v", lexical, err)
		}
		return v
	}
	pairs := []struct{ a, b quad.Value }{
		{parse("2025-01-01T01:00:00+01:00", XSDDateTime), parse("2025-01-01T00:00:00Z", XSDDateTime)},
		{parse("007", XSDInteger), parse("7", XSDInteger)},
	}
	for _, p := range pairs {
		if string(quad.HashOf(p.a)) != string(quad.HashOf(p.b)) {
			t.Logf("cayley no longer merges %#v and %#v", p.a, p.b)
		} else {
			t.Logf("cayley's typed values merge %#v and %#v into one node", p.a, p.b)
		}
	}
	if _, ok := parse("007", XSDInteger).(quad.Int); !ok {
		t.Errorf("ParseValue(\"007\"^^xsd:integer) is no longer a quad.Int")
	}
}

// TestStoredValuesStayRaw checks what cayley's kv store hands back for the
// literals this package writes: the same quad.TypedString, never a parsed
// quad.Int or quad.Time.
func TestStoredValuesStayRaw(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "prov.db"), &Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	subj, pred := IRI("https://example.com/s"), IRI("https://example.com/p")
	terms := []Term{
		Literal("007", XSDInteger),
		Literal("2025-01-01T01:00:00+01:00", XSDDateTime),
		String("x"),
		Literal("true", XSDBoolean),
		LangString("x", "en"),
	}
	var batch []Quad
	for _, o := range terms {
		batch = append(batch, Quad{S: subj, P: pred, O: o})
	}
	if _, err := s.Add(batch); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, o := range terms {
		want := toValue(o)
		refs, err := s.qs.RefsOf(ctx, []quad.Value{want})
		if err != nil || refs[0].(ckv.Int64Value) == 0 {
			t.Fatalf("RefsOf(%#v) = %v, %v", want, refs, err)
		}
		vals, err := s.qs.ValuesOf(ctx, refs)
		if err != nil {
			t.Fatal(err)
		}
		if vals[0] != want {
			t.Errorf("stored %#v, cayley returns %T %#v", want, vals[0], vals[0])
		}
	}
	if err := s.Check(ctx); err != nil {
		t.Error(err)
	}
}
