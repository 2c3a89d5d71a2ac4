package graph_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
)

// TestGizmo runs Gizmo queries on a store: results, the row limit, a
// query error, and a cancelled context.
func TestGizmo(t *testing.T) {
	st, err := graph.Open(filepath.Join(t.TempDir(), "g.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const pg = "https://w3id.org/provgraph/ns#"
	var qs []graph.Quad
	for _, c := range []string{"c1", "c2", "c3"} {
		qs = append(qs, graph.Quad{S: graph.IRI("https://w3id.org/provgraph/id/citation/" + c), P: graph.IRI(pg + "engineName"), O: graph.String("chatgpt")})
	}
	if _, err := st.Add(qs); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := st.Gizmo(ctx, `g.V().Has("<`+pg+`engineName>", "chatgpt").All()`, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Results) != 3 || res.Truncated {
		t.Errorf("Gizmo = %+v, want 3 results", res)
	}
	res, err = st.Gizmo(ctx, `g.V().Has("<`+pg+`engineName>", "chatgpt").All()`, 2)
	if err != nil || len(res.Results) != 2 || !res.Truncated {
		t.Errorf("Gizmo with limit 2 = %+v, %v; want 2 results, truncated", res, err)
	}
	if _, err := st.Gizmo(ctx, `g.V(.All()`, 10); !errors.Is(err, graph.ErrQuery) {
		t.Errorf("syntax error: %v, want ErrQuery", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := st.Gizmo(cctx, `while (true) {}`, 10); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v, want context.Canceled", err)
	}
}
