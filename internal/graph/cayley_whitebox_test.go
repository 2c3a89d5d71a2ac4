package graph

import (
	"testing"

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
