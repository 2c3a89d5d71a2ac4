package ingest_test

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/resolve"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/synth"
)

// viewDump is the view of policy d, entry by entry.
func viewDump(t testing.TB, st *graph.Store, d string) string {
	t.Helper()
	var lines []string
	err := st.Read(func(r *graph.Reader) (err error) {
		lines, err = citestore.DumpView(r, d)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// checkViews fails the test when a view differs from the quads.
func checkViews(t testing.TB, st *graph.Store) {
	t.Helper()
	if err := citestore.New(st).CheckViews(context.Background()); err != nil {
		t.Fatalf("views differ from the quads: %v", err)
	}
}

// rebuiltEqual rebuilds the view of d and fails when it differs from the
// view as kept.
func rebuiltEqual(t testing.TB, st *graph.Store, d, what string) {
	t.Helper()
	kept := viewDump(t, st, d)
	if !strings.HasPrefix(kept, "complete") {
		t.Fatalf("%s: no complete view of %s kept:\n%s", what, d, kept)
	}
	if _, err := citestore.New(st).RebuildView(context.Background(), d, 7, nil); err != nil {
		t.Fatal(err)
	}
	if rebuilt := viewDump(t, st, d); rebuilt != kept {
		t.Errorf("%s: the view kept differs from one rebuilt from the quads\nkept:\n%s\nrebuilt:\n%s", what, kept, rebuilt)
	}
	checkViews(t, st)
}

// viewInput is the repository's example citations and synthetic ones,
// split into parts.
func viewInput(t testing.TB, parts int) []string {
	t.Helper()
	example, err := os.ReadFile(filepath.Join("..", "..", "testdata", "citations.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var syn bytes.Buffer
	if err := synth.New(synth.Options{Seed: 17, Sites: 40}).Write(&syn, 1500); err != nil {
		t.Fatal(err)
	}
	lines := append(strings.SplitAfter(strings.TrimSpace(string(example))+"\n", "\n"), strings.SplitAfter(syn.String(), "\n")...)
	var out []string
	for i := range parts {
		var b strings.Builder
		for j := i; j < len(lines); j += parts {
			b.WriteString(lines[j])
		}
		out = append(out, writeFile(t, filepath.Base(t.Name())+string(rune('a'+i))+".jsonl", b.String()))
	}
	return out
}

// TestViewSeveralRunsEqualsRebuild: a database ingested in three runs
// keeps a view equal, byte for byte, to one ingested in a single run and
// to one rebuilt from the quads, and check finds it equal to a scan.
func TestViewSeveralRunsEqualsRebuild(t *testing.T) {
	d := normalize.Default().Digest()
	st := openStore(t)
	parts := viewInput(t, 3)
	for _, p := range parts {
		if _, err := ingestFile(t, st, p, false); err != nil {
			t.Fatal(err)
		}
	}
	checkViews(t, st)
	several := viewDump(t, st, d)

	one := openStore(t)
	all := writeFile(t, "all.jsonl", readAll(t, parts...))
	sum, err := ingestFile(t, one, all, false)
	if err != nil {
		t.Fatal(err)
	}
	if sum.NoView {
		t.Error("an ingest into a new database says it keeps no view")
	}
	if got := viewDump(t, one, d); got != several {
		t.Errorf("the view of three runs differs from the view of one")
	}
	if strings.Count(several, "\nrows ") < 1500 {
		t.Errorf("the view holds %d rows, want one per citation", strings.Count(several, "\nrows "))
	}
	rebuiltEqual(t, st, d, "three runs")

	// Ingesting the same input again writes nothing into the view.
	if _, err := ingestFile(t, st, parts[1], false); err != nil {
		t.Fatal(err)
	}
	if got := viewDump(t, st, d); got != several {
		t.Errorf("ingesting an input again changed the view")
	}
}

func readAll(t testing.TB, paths ...string) string {
	t.Helper()
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
	}
	return b.String()
}

// TestViewResolveRewritesRows: resolve with captured bodies gives the
// citations it fetches retrievals, redirects, canonicals and extractions
// (text digest and SimHash); the view kept equals one rebuilt, after a
// first and a second resolve, and after extract.
func TestViewResolveRewritesRows(t *testing.T) {
	port := resolveSite(t)
	st := openStore(t)
	in := citationsFile(t, port, "/moved", "/away", "/page", "/page?x=1", "/moved?y=2")
	if _, err := ingestFile(t, st, in, false); err != nil {
		t.Fatal(err)
	}
	d := normalize.Default().Digest()
	before := viewDump(t, st, d)
	dir := t.TempDir()
	resolveBodies := func() {
		w, err := capture.Open(capture.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		f := testFetcherCapturing(t, w)
		targets, _, err := ingest.ResolveTargets(context.Background(), st, ingest.TargetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ingest.Resolve(context.Background(), st, targets, ingest.ResolveOptions{Policy: f.Policy(), Fetch: f.Fetch, FetchBody: f.FetchBody, Sync: w.Sync, Concurrency: 2}); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	resolveBodies()
	after := viewDump(t, st, d)
	if after == before {
		t.Fatal("resolve changed nothing in the view")
	}
	rebuiltEqual(t, st, d, "after resolve")
	resolveBodies()
	rebuiltEqual(t, st, d, "after a second resolve")
	if _, err := ingest.Reextract(context.Background(), st, dir); err != nil {
		t.Fatal(err)
	}
	rebuiltEqual(t, st, d, "after extract")

	// The rows hold the extractions' evidence.
	rows, err := citestore.New(st).RowsAfter(context.Background(), d, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	sims := 0
	for _, r := range rows {
		for _, e := range r.Evidence {
			if e.HasSim && e.Digest != "" {
				sims++
			}
		}
	}
	if sims == 0 {
		t.Errorf("no row holds a text digest and SimHash after resolving with bodies: %+v", rows)
	}
}

func testFetcherCapturing(t testing.TB, w *capture.Writer) *resolve.Fetcher {
	t.Helper()
	f, err := resolve.New(&resolve.Options{
		Policy:  model.FetchPolicy{UserAgent: "provgraph-test", AllowPrivate: true, Timeout: 5 * time.Second},
		PerHost: 10,
		LookupHost: func(_ context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
		Capture: w,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f
}

// TestViewRenormalize: renormalize writes the view of its policy (a new
// one: built; one kept already: kept current), equal to a rebuild.
func TestViewRenormalize(t *testing.T) {
	st := openStore(t)
	for _, p := range viewInput(t, 2) {
		if _, err := ingestFile(t, st, p, false); err != nil {
			t.Fatal(err)
		}
	}
	lenient := normalize.Lenient()
	if _, err := ingest.Renormalize(context.Background(), st, ingest.Options{Policy: lenient, BatchQuads: 300, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	if has, err := citestore.New(st).HasView(context.Background(), lenient.Digest()); err != nil || !has {
		t.Fatalf("HasView(lenient) after renormalize = %v, %v; want true", has, err)
	}
	rebuiltEqual(t, st, lenient.Digest(), "renormalize under a new policy")
	rebuiltEqual(t, st, normalize.Default().Digest(), "the first policy after renormalize")
	// The default policy's view is kept through a renormalize under it.
	if _, err := ingest.Renormalize(context.Background(), st, ingest.Options{Policy: normalize.Default(), BatchQuads: 300, Now: clock()}); err != nil {
		t.Fatal(err)
	}
	rebuiltEqual(t, st, normalize.Default().Digest(), "renormalize under a policy with a view")
}

// TestViewFormat4 opens the format 4 file of graph's tests: an ingest
// into it keeps no view and says so, its file stays version 4, check
// passes, and rebuild writes a view and marks it version 7.
func TestViewFormat4(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "graph", "testdata", "format-v4", "prov.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "v4.db")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sum, err := ingestFile(t, st, viewInput(t, 1)[0], false)
	if err != nil {
		t.Fatal(err)
	}
	if !sum.NoView {
		t.Error("an ingest into a format 4 file does not say it keeps no view")
	}
	if s, _ := st.Stats(); s.Version != 4 {
		t.Errorf("version after an ingest = %d, want 4 (no view written)", s.Version)
	}
	cs := citestore.New(st)
	if err := cs.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.KeyRows(context.Background(), normalize.Default().Digest(), "https://example.com/"); !errors.Is(err, store.ErrNoView) {
		t.Errorf("KeyRows without a view: %v, want ErrNoView", err)
	}
	rebuiltOnce(t, cs, normalize.Default().Digest())
	if s, _ := st.Stats(); s.Version != 7 {
		t.Errorf("version after a rebuild = %d, want 7", s.Version)
	}
	checkViews(t, st)
}

func rebuiltOnce(t testing.TB, cs *citestore.Store, d string) {
	t.Helper()
	if _, err := cs.RebuildView(context.Background(), d, 0, nil); err != nil {
		t.Fatal(err)
	}
}
