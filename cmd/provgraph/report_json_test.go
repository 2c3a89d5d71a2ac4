package main

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
)

// TestReportJSONStreams checks that the streaming writer of groups
// --format json writes exactly what encoding the whole report does, on
// the query fixture corpus (every kind of group and relation), on an
// empty report and on one with warnings.
func TestReportJSONStreams(t *testing.T) {
	db := filepath.Join(t.TempDir(), "corpus.db")
	var out, errb bytes.Buffer
	if code := Run(context.Background(), []string{"ingest", "--db", db, "../../internal/query/testdata/corpus.jsonl"}, nil, &out, &errb); code != 0 {
		t.Fatalf("ingest: %d %s", code, errb.String())
	}
	st, err := graph.Open(db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	snap, err := query.Load(context.Background(), citestore.New(st), "")
	if err != nil {
		t.Fatal(err)
	}
	rep := query.Groups(snap, query.GroupOptions{MaxShared: model.DefaultMaxShared})
	empty := *rep
	empty.Groups = rep.Groups[:0:0]
	warned := *rep
	warned.Warnings = []string{"a <warning> & more"}
	for name, r := range map[string]*query.Report{"corpus": rep, "no groups": &empty, "warnings": &warned} {
		var whole, streamed bytes.Buffer
		if err := render.JSON(&whole, r); err != nil {
			t.Fatal(err)
		}
		if err := render.ReportJSON(&streamed, r); err != nil {
			t.Fatal(err)
		}
		if len(r.Groups) == 0 && name == "corpus" {
			t.Fatal("the corpus has no groups")
		}
		if whole.String() != streamed.String() {
			t.Errorf("%s: streamed JSON differs from the encoded report:\n%s\nwant\n%s", name, streamed.String(), whole.String())
		}
	}
}
