package query_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/store"
)

// withinLookup counts the reads asked of it, by whether they were asked
// on the lineage's own read transaction (inside View).
type withinLookup struct {
	store.Reader
	b      *citestore.Store
	within bool
	calls  *[2]int // [unbound, within]
}

func (l *withinLookup) View(ctx context.Context, fn func(store.Reader) error) error {
	return l.b.View(ctx, func(v store.Reader) error {
		return fn(&withinLookup{Reader: v, b: l.b, within: true, calls: l.calls})
	})
}

func (l *withinLookup) count() {
	if l.within {
		l.calls[1]++
	} else {
		l.calls[0]++
	}
}

func (l *withinLookup) ByKey(ctx context.Context, d, k string) ([]string, error) {
	l.count()
	return l.Reader.ByKey(ctx, d, k)
}

func (l *withinLookup) ByRaw(ctx context.Context, raw string) ([]string, error) {
	l.count()
	return l.Reader.ByRaw(ctx, raw)
}

func (l *withinLookup) ByContent(ctx context.Context, h string) ([]string, error) {
	l.count()
	return l.Reader.ByContent(ctx, h)
}

func (l *withinLookup) Citations(ctx context.Context, d string, ids []string) ([]*store.Citation, error) {
	l.count()
	return l.Reader.Citations(ctx, d, ids)
}

func (l *withinLookup) ByTextDigest(ctx context.Context, d string) ([]string, error) {
	l.count()
	return l.Reader.ByTextDigest(ctx, d)
}

func (l *withinLookup) ByFinalURL(ctx context.Context, u string, fn func([]string) bool) error {
	l.count()
	return l.Reader.ByFinalURL(ctx, u, fn)
}

func (l *withinLookup) StoredPolicies(ctx context.Context) ([]store.PolicyRef, error) {
	l.count()
	return l.Reader.StoredPolicies(ctx)
}

func (l *withinLookup) Runs(ctx context.Context) ([]store.Run, error) {
	l.count()
	return l.Reader.Runs(ctx)
}

// TestLineageLooksUpWithinItsTransaction: a lineage's lookups run on its
// own read transaction (its store.Viewer view), never on a second one
// opened inside it (which
// deadlocks with a writer growing the file's mapping: provgraph serve
// hung so during an ingest), and answer as a lookup on its own would.
func TestLineageLooksUpWithinItsTransaction(t *testing.T) {
	st := exampleStore(t)
	ctx := context.Background()
	var calls [2]int
	for _, tt := range lineageTests {
		if strings.Contains(tt.id, "/") { // a raw URL, not a citation id
			continue
		}
		lk := &withinLookup{Reader: citestore.New(st), b: citestore.New(st), calls: &calls}
		got, err := query.LineageOf(ctx, lk, tt.id, nil)
		if err != nil {
			t.Fatal(err)
		}
		want, err := query.LineageOf(ctx, citestore.New(st), tt.id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if calls[0] != 0 {
			t.Errorf("LineageOf(%q): %d lookups on a transaction of their own", tt.id, calls[0])
		}
		if !reflect.DeepEqual(summarize(got), summarize(want)) {
			t.Errorf("LineageOf(%q) within its transaction =\n%+v\nwant\n%+v", tt.id, summarize(got), summarize(want))
		}
	}
	if calls[1] == 0 {
		t.Errorf("no lookup on the lineages' transactions")
	}
}
