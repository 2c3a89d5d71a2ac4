package export_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/export"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestDescriptionRedirectLimits checks that the description states the
// redirect limits the database's resolve runs recorded, each once, and no
// limit when there is no resolve run (regression test for issue 18: it
// stated a constant 10 whatever the runs had applied).
func TestDescriptionRedirectLimits(t *testing.T) {
	st := fixtureStore(t)
	limits := func() []string {
		t.Helper()
		out, sum := exportBytes(t, st, export.NQuads, t1, false)
		subject := "<" + sum.Dataset.Value + "/convention/redirect-limit> "
		var values []string
		for _, l := range lines(out) {
			if v, ok := strings.CutPrefix(l, subject+"<http://www.w3.org/1999/02/22-rdf-syntax-ns#value> "); ok {
				values = append(values, strings.TrimSuffix(v, " <"+sum.DescriptionGraph.Value+"> ."))
			} else if strings.HasPrefix(l, subject) && strings.Contains(l, "purl.org/dc/terms/title") {
				values = append(values, "(titled)")
			}
		}
		slices.Sort(values)
		return values
	}
	if got := limits(); len(got) != 0 {
		t.Errorf("no resolve run: the description states a redirect limit %q", got)
	}
	for _, n := range []int{3, 10, 3, 0} {
		_, err := ingest.Resolve(context.Background(), st, nil, ingest.ResolveOptions{
			Policy: model.FetchPolicy{MaxRedirects: n, UserAgent: "t"},
			Fetch:  func(context.Context, string) (*model.Retrieval, error) { return nil, nil },
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	integer := func(n int) string { return fmt.Sprintf(`"%d"^^<http://www.w3.org/2001/XMLSchema#integer>`, n) }
	want := []string{integer(0), integer(10), integer(3), "(titled)"}
	if got := limits(); !slices.Equal(got, want) {
		t.Errorf("runs with limits 3, 10, 3 and 0: the description states %q, want %q", got, want)
	}
}

// TestDescriptionExtractors checks that the description names, once each,
// the content extractors whose evidence the data holds, and none when the
// data holds no extraction.
func TestDescriptionExtractors(t *testing.T) {
	st := fixtureStore(t)
	extractors := func() []string {
		t.Helper()
		out, _ := exportBytes(t, st, export.NQuads, t1, false)
		var got []string
		for _, l := range lines(out) {
			if strings.Contains(l, "/extractor/") && strings.Contains(l, "owl#versionInfo") {
				got = append(got, l[strings.Index(l, `> "`)+3:strings.LastIndex(l, `" <`)])
			}
		}
		slices.Sort(got)
		return got
	}
	if got := extractors(); len(got) != 0 {
		t.Errorf("no extraction stored: the description names extractors %q", got)
	}
	for i, v := range []string{"ex/2", "ex/1", "ex/2"} {
		ev := graph.IRI(fmt.Sprintf("https://example.test/evidence/%d", i))
		if _, err := st.Add([]graph.Quad{{S: ev, P: graph.IRI(vocab.Extractor), O: graph.String(v)}}); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := extractors(), []string{"ex/1", "ex/2"}; !slices.Equal(got, want) {
		t.Errorf("evidence by ex/2, ex/1, ex/2: the description names %q, want %q", got, want)
	}
}
