package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
)

// TestLineagesOfMatchesLineageOf: the lineages of a group's members read
// together are, member by member, the lineages LineageOf reads one at a
// time (but for how many citations the shared exploration read), in the
// order asked; an unknown id is ErrNoCitation.
func TestLineagesOfMatchesLineageOf(t *testing.T) {
	st := exampleStore(t)
	ctx := context.Background()
	snap, err := query.Load(ctx, citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	text := func(l *query.Lineage) string {
		c := *l
		if c.Group != nil {
			g := *c.Group
			g.Read = 0
			c.Group = &g
		}
		b, _ := json.Marshal(&c)
		return string(b)
	}
	groups := 0
	for _, g := range query.Groups(snap, query.GroupOptions{}).Groups {
		var ids []string
		for i := len(g.Members) - 1; i >= 0; i-- { // not in the sorted order
			ids = append(ids, g.Members[i].CitationID)
		}
		ls, err := query.LineagesOf(ctx, citestore.New(st), ids, nil)
		if err != nil {
			t.Fatalf("LineagesOf(%v): %v", ids, err)
		}
		groups++
		for i, id := range ids {
			one, err := query.LineageOf(ctx, citestore.New(st), id, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := text(ls[i]), text(one); got != want {
				t.Errorf("LineagesOf(%v)[%d] =\n%s\nwant\n%s", ids, i, got, want)
			}
		}
	}
	if groups < 2 {
		t.Fatalf("%d groups of two members or more in the example", groups)
	}
	if _, err := query.LineagesOf(ctx, citestore.New(st), []string{"nobody"}, nil); !errors.Is(err, query.ErrNoCitation) {
		t.Errorf("unknown id: %v, want ErrNoCitation", err)
	}
}
