package citestore

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

var zzOut map[graph.ID]int
var zzIn, zzDecodes int

func TestZZLocality(t *testing.T) {
	path := os.Getenv("LOCDB")
	if path == "" {
		t.Skip()
	}
	ctx := context.Background()
	g, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := New(g)
	infos, _ := s.Views(ctx)
	pol := infos[0].Policy
	must(t, g.Read(func(r *graph.Reader) error {
		var ids []graph.ID
		r.Subjects(ctx, r.ID(iri(vocab.RDFType)), r.ID(citationClass), func(id graph.ID) { ids = append(ids, id) })
		zzOut = map[graph.ID]int{}
		rd := NewReader(ctx, r)
		for b := 0; b < 20; b++ {
			lo := b * 40000
			rd.reset()
			rd.SetWindow(ids[lo], ids[lo+4096])
			for _, id := range ids[lo : lo+4096] {
				tm, _ := rd.term(id)
				readRow(rd, tm.Value, pol)
			}
		}
		fmt.Println("decodes", zzDecodes, "distinct out", len(zzOut))
		type kv struct {
			id graph.ID
			n  int
		}
		var top []kv
		for id, n := range zzOut {
			top = append(top, kv{id, n})
		}
		for i := range top {
			for j := i + 1; j < len(top); j++ {
				if top[j].n > top[i].n {
					top[i], top[j] = top[j], top[i]
				}
			}
			if i > 15 {
				break
			}
		}
		for _, x := range top[:15] {
			tm, _ := r.Term(x.id)
			fmt.Println(x.n, x.id, tm.Kind, trunc(tm.Value))
		}
		return nil
	}))
}

func trunc(s string) string {
	if len(s) > 80 {
		return s[:80]
	}
	return s
}
