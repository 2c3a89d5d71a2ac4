package citestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
	"github.com/provgraph/provgraph/internal/vocab"
)

// viewStore is a new database holding the storetest corpus, appended in
// one batch, so that it keeps a view of the default policy.
func viewStore(t *testing.T) (*Store, *graph.Store) {
	t.Helper()
	g, err := graph.Open(filepath.Join(t.TempDir(), "v.db"), &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	s := New(g)
	if _, err := s.Append(context.Background(), store.Batch{Policy: normalize.Default(), Records: storetest.Corpus(t)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Fatalf("check of the undamaged view: %v", err)
	}
	return s, g
}

// layoutOf returns the layout of g's view of the default policy.
func layoutOf(t *testing.T, g *graph.Store) string {
	var l string
	err := g.Read(func(r *graph.Reader) error {
		l = string(r.View(normalize.Default().Digest()).Get([]byte(viewLayout)))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCheckViewDamage damages a view in each way it can differ from the
// quads and checks that check names the policy and what differs, first
// key and citation id or posting, as damage (graph.ErrCorrupt).
func TestCheckViewDamage(t *testing.T) {
	d := normalize.Default().Digest()
	defer func(n, m int) { viewCheckBatch, viewCheckScanMax = n, m }(viewCheckBatch, viewCheckScanMax)
	viewCheckBatch = 3 // several batches of citations and of rows
	// firstKeyed finds a keyed row with evidence.
	firstKeyed := func(b *graph.Bucket) (k, v []byte) {
		rows, _ := openViewMap(b, subRows, false)
		rows.Ascend(nil, func(rk, rv []byte) (bool, error) {
			r, err := decodeRow(rk, rv)
			if err == nil && r.State == store.RowKeyed && len(r.Evidence) > 0 {
				k, v = bytes.Clone(rk), bytes.Clone(rv)
				return false, nil
			}
			return true, nil
		})
		return k, v
	}
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T, b *graph.Bucket) string // returns what the problem must name
		want   string
	}{
		{"row missing", func(t *testing.T, b *graph.Bucket) string {
			k, _ := firstKeyed(b)
			rows, _ := openViewMap(b, subRows, false)
			must(t, rows.Delete(k))
			must(t, b.Put([]byte(viewRowsCount), binary.BigEndian.AppendUint64(nil, countAt(b)-1)))
			key, id, _ := splitRowKey(k)
			return "lacks the row of key " + key + ", citation " + id
		}, ""},
		{"row changed", func(t *testing.T, b *graph.Bucket) string {
			k, v := firstKeyed(b)
			rows, _ := openViewMap(b, subRows, false)
			v[1] ^= 2 // the related flag
			must(t, rows.Put(k, v))
			key, id, _ := splitRowKey(k)
			return "the row of key " + key + ", citation " + id + " differs"
		}, ""},
		{"row added", func(t *testing.T, b *graph.Bucket) string {
			rows, _ := openViewMap(b, subRows, false)
			must(t, rows.Put(rowKey("", "no-such-citation"), encodeRow(store.ViewRow{CitationID: "no-such-citation", State: store.RowUnnormalized})))
			must(t, b.Put([]byte(viewRowsCount), binary.BigEndian.AppendUint64(nil, countAt(b)+1)))
			return "holds a row of citation no-such-citation (no key)"
		}, ""},
		{"row count", func(t *testing.T, b *graph.Bucket) string {
			must(t, b.Put([]byte(viewRowsCount), binary.BigEndian.AppendUint64(nil, countAt(b)+5)))
			return "row count says"
		}, ""},
		{"row undecodable", func(t *testing.T, b *graph.Bucket) string {
			k, _ := firstKeyed(b)
			rows, _ := openViewMap(b, subRows, false)
			must(t, rows.Put(k, []byte{0, 0, 9}))
			_, id, _ := splitRowKey(k)
			return "(citation " + id + ")"
		}, ""},
		{"posting missing", func(t *testing.T, b *graph.Bucket) string {
			p, _ := openViewMap(b, subContent, false)
			var first []byte
			p.Ascend(nil, func(k, _ []byte) (bool, error) { first = bytes.Clone(k); return false, nil })
			must(t, p.Delete(first))
			return "posting bucket content lacks"
		}, ""},
		{"posting stray", func(t *testing.T, b *graph.Bucket) string {
			p, _ := openViewMap(b, subRedirect, false)
			must(t, p.Put(append(appendStr(nil, "https://nowhere.test/"), "https://source.test/"...), nil))
			return "posting bucket redirect holds"
		}, ""},
	} {
		for _, c := range []struct {
			scanMax int
			layout  string
			workers int
		}{{0, layoutRuns, 1}, {0, layoutRuns, 3}, {1 << 30, layoutRuns, 1}, {0, "", 1}, {0, "", 3}, {1 << 30, "", 1}} {
			viewCheckScanMax = c.scanMax // point reads, then a scan
			t.Run(fmt.Sprintf("%s/scan-max-%d/layout-%q/workers-%d", tc.name, c.scanMax, c.layout, c.workers), func(t *testing.T) {
				defer func(l string, w int) { newViewLayout, viewCheckWorkers = l, w }(newViewLayout, viewCheckWorkers)
				newViewLayout, viewCheckWorkers = c.layout, c.workers
				s, g := viewStore(t)
				if got := layoutOf(t, g); got != c.layout {
					t.Fatalf("view layout %q, want %q", got, c.layout)
				}
				var want string
				err := g.Update(func(w *graph.Writer) error {
					want = tc.damage(t, w.View(d))
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				err = s.Check(context.Background())
				if !errors.Is(err, graph.ErrCorrupt) {
					t.Fatalf("Check of a view damaged (%s) = %v, want ErrCorrupt", tc.name, err)
				}
				for _, w := range []string{"view of policy provgraph-default@", want} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("Check of a view damaged (%s) = %q, want it to say %q", tc.name, err, w)
					}
				}
			})
		}
	}
}

// TestCheckRowsInParallel: the rows a view check makes by point reads on
// several goroutines sum to what one makes, with r's worker and another
// taking batches (the hooks make them), and a check with them passes.
func TestCheckRowsInParallel(t *testing.T) {
	defer func(n, m, w int) { viewCheckBatch, viewCheckScanMax, viewCheckWorkers = n, m, w }(viewCheckBatch, viewCheckScanMax, viewCheckWorkers)
	viewCheckBatch, viewCheckScanMax = 2, 0
	s, g := viewStore(t)
	pol := normalize.Default()
	rows := func(workers int) rowSum {
		t.Helper()
		viewCheckWorkers = workers
		var sum rowSum
		err := g.Read(func(r *graph.Reader) error {
			infos, err := s.Views(context.Background())
			if err != nil || len(infos) != 1 || infos[0].Policy.Digest != pol.Digest() {
				t.Fatalf("Views = %v, %v; want the default policy's", infos, err)
			}
			sum, err = s.citationRows(context.Background(), r, infos[0].Policy, true, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	one := rows(1)
	if one.n < 3*int64(viewCheckBatch) {
		t.Fatalf("%d rows: too few for batches on several workers", one.n)
	}
	// Worker 0 (r's) takes the first batch while the others wait, then
	// waits until another has taken one.
	var mu sync.Mutex
	took := map[int]int{}
	zeroTook, otherTook := make(chan struct{}), make(chan struct{})
	var zeroOnce, otherOnce sync.Once
	beforeTake = func(w int) {
		if w != 0 {
			<-zeroTook
		}
	}
	afterTake = func(w int, ok bool) {
		if ok {
			mu.Lock()
			took[w]++
			mu.Unlock()
		}
		if w == 0 {
			zeroOnce.Do(func() { close(zeroTook); <-otherTook })
		} else if ok {
			otherOnce.Do(func() { close(otherTook) })
		}
	}
	defer func() { beforeTake, afterTake = nil, nil }()
	three := rows(3)
	if three != one {
		t.Errorf("rows made on 3 workers: %d rows, sum %x; on one: %d rows, sum %x", three.n, three.sum, one.n, one.sum)
	}
	if took[0] == 0 || len(took) < 2 {
		t.Errorf("batches taken by worker: %v, want r's worker and another", took)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("check with 3 workers: %v", err)
	}
}

func countAt(b *graph.Bucket) uint64 { return binary.BigEndian.Uint64(b.Get([]byte(viewRowsCount))) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestInterruptedRebuildIsNoView: a view whose rebuild did not write its
// marker is no view: reads fail with ErrNoView, check passes, and a
// write leaves it alone.
func TestInterruptedRebuildIsNoView(t *testing.T) {
	s, g := viewStore(t)
	d := normalize.Default().Digest()
	if err := g.Update(func(w *graph.Writer) error { return w.View(d).Delete([]byte(viewComplete)) }); err != nil {
		t.Fatal(err)
	}
	if has, err := s.HasView(context.Background(), d); err != nil || has {
		t.Errorf("HasView of an incomplete view = %v, %v; want false", has, err)
	}
	if _, err := s.KeyRows(context.Background(), d, "https://example.com/"); !errors.Is(err, store.ErrNoView) {
		t.Errorf("KeyRows of an incomplete view: %v, want ErrNoView", err)
	}
	if err := s.Check(context.Background()); err != nil {
		t.Errorf("check with an incomplete view: %v", err)
	}
	views, err := s.Views(context.Background())
	if err != nil || len(views) != 1 || views[0].Complete {
		t.Errorf("Views = %+v, %v; want one incomplete", views, err)
	}
	if _, err := s.RebuildView(context.Background(), d, 3, nil); err != nil {
		t.Fatal(err)
	}
	if has, _ := s.HasView(context.Background(), d); !has {
		t.Error("no view after a rebuild")
	}
}

// TestRowEncoding: a row reads back as written, evidence texts in their
// short forms and not.
func TestRowEncoding(t *testing.T) {
	r := store.ViewRow{Key: "https://a.test/", CitationID: "c1", State: store.RowKeyed, KeyContent: true, Related: true,
		Redirects: []string{"https://a.test/x"}, Links: []string{"https://b.test/", "https://c.test/"},
		Evidence: []store.ViewEvidence{
			{Retrieval: retrievalPrefix + "00112233445566778899aabbccddeeff", Content: "sha256:" + strings.Repeat("ab", 32), Digest: "sha256:" + strings.Repeat("0f", 32), SimHash: 0xdeadbeef, HasSim: true},
			{Retrieval: retrievalPrefix + "00112233445566778899AABBCCDDEEFF", Content: "sha256:short", Digest: ""},
		}}
	got, err := decodeRow(rowKey(r.Key, r.CitationID), encodeRow(r))
	if err != nil {
		t.Fatal(err)
	}
	if encodeRow(got) == nil || string(encodeRow(got)) != string(encodeRow(r)) || got.Evidence[1].Retrieval != r.Evidence[1].Retrieval || got.Evidence[0].Content != r.Evidence[0].Content || got.Links[1] != "https://c.test/" {
		t.Errorf("row read back = %+v, want %+v", got, r)
	}
}

// TestLeanRowIsWholeRow: the row readRow makes of a lean read (what a
// rebuild and check use) equals the row of the whole citation, for every
// citation of the storetest corpus and of synthetic data with redirects,
// canonicals, relations and extractions (current, superseded and soft
// errors), under the policy its view keeps and under another.
func TestLeanRowIsWholeRow(t *testing.T) {
	ctx := context.Background()
	g := evidenceStore(t)
	n := 0
	must(t, g.Read(func(r *graph.Reader) error {
		rd := NewReader(ctx, r)
		pols, err := rd.Policies()
		if err != nil {
			return err
		}
		ids, err := citationIDs(ctx, r)
		if err != nil {
			return err
		}
		for _, pol := range pols {
			for _, members := range []bool{false, true} {
				lean, whole := NewReader(ctx, r), NewReader(ctx, r)
				for _, id := range ids {
					c, err := r.Term(id)
					if err != nil {
						return err
					}
					got, ok, err := readRow(lean, c.Value, pol, members)
					if err != nil || !ok {
						return fmt.Errorf("readRow(%s): %v, %v", c.Value, ok, err)
					}
					wc, err := whole.Citation(c.Value, pol)
					if err != nil {
						return err
					}
					if want := viewRowOf(wc, members); !bytes.Equal(encodeRow(got), encodeRow(want)) || got.Key != want.Key {
						t.Errorf("policy %s, %s, member records %v: row read for the view %+v, whole %+v", pol, c.Value, members, got, want)
					}
					if members && got.Member == nil {
						t.Errorf("policy %s, %s: no member record", pol, c.Value)
					}
					n++
				}
			}
		}
		return nil
	}))
	if n < 2000 {
		t.Fatalf("compared %d rows, want every citation under two policies, with and without member records", n)
	}
}

// TestWindowReadsAsPointReads holds a Reader given a window of term ids
// (SetWindow, as the view check reads a batch of citations) to reading
// every citation, lean and whole, exactly as a Reader without one: with
// windows of one citation and of several, windows cut short of the
// citation's nodes, windows starting before it, and nodes met before the
// window (raw URLs cited again under another policy, extractions added
// after the citations), and with the links the window holds bounded
// (windowNodeLinks, windowLinks) so that the nodes past the bounds are
// read by point lookups.
func TestWindowReadsAsPointReads(t *testing.T) {
	defer func(n, m int) { windowNodeLinks, windowLinks = n, m }(windowNodeLinks, windowLinks)
	g := evidenceStore(t)
	for _, lim := range []struct{ node, all int }{{4096, 4 << 20}, {2, 1 << 20}, {1 << 20, 3}} {
		windowNodeLinks, windowLinks = lim.node, lim.all
		t.Run(fmt.Sprintf("links=%d,%d", lim.node, lim.all), func(t *testing.T) { testWindowReads(t, g) })
	}
}

func testWindowReads(t *testing.T, g *graph.Store) {
	ctx := context.Background()
	n := 0
	must(t, g.Read(func(r *graph.Reader) error {
		pols, err := NewReader(ctx, r).Policies()
		if err != nil {
			return err
		}
		ids, err := citationIDs(ctx, r)
		if err != nil {
			return err
		}
		next := func(i, k int) graph.ID {
			if i+k < len(ids) {
				return ids[i+k]
			}
			return r.MaxID() + 1
		}
		windows := []struct {
			name   string
			lo, hi func(i int) graph.ID
		}{
			{"one citation", func(i int) graph.ID { return ids[i] }, func(i int) graph.ID { return next(i, 1) }},
			{"four citations", func(i int) graph.ID { return ids[i-i%4] }, func(i int) graph.ID { return next(i-i%4, 4) }},
			{"cut short", func(i int) graph.ID { return ids[i] }, func(i int) graph.ID { return ids[i] + 2 }},
			{"from before", func(i int) graph.ID { return max(ids[i], 8) - 7 }, func(i int) graph.ID { return ids[i] + 3 }},
		}
		for _, pol := range pols[:1] {
			plain := NewReader(ctx, r)
			for _, w := range windows {
				rd := NewReader(ctx, r)
				for i, id := range ids {
					c, err := r.Term(id)
					if err != nil {
						return err
					}
					want, _, err := readRow(plain, c.Value, pol, true)
					if err != nil {
						return err
					}
					wantWhole, err := plain.Citation(c.Value, pol)
					if err != nil {
						return err
					}
					rd.reset()
					if err := rd.SetWindow(w.lo(i), w.hi(i), nil); err != nil {
						return err
					}
					got, _, err := readRow(rd, c.Value, pol, true)
					if err != nil {
						return fmt.Errorf("%s, %s: %w", w.name, c.Value, err)
					}
					if !bytes.Equal(encodeRow(got), encodeRow(want)) || got.Key != want.Key {
						t.Errorf("%s, %s: row %+v, without a window %+v", w.name, c.Value, got, want)
					}
					rd.reset()
					if err := rd.SetWindow(w.lo(i), w.hi(i), nil); err != nil {
						return err
					}
					gotWhole, err := rd.Citation(c.Value, pol)
					if err != nil {
						return fmt.Errorf("%s, %s: %w", w.name, c.Value, err)
					}
					if !reflect.DeepEqual(gotWhole, wantWhole) {
						t.Errorf("%s, %s: citation %+v, without a window %+v", w.name, c.Value, gotWhole, wantWhole)
					}
					n++
				}
			}
		}
		return nil
	}))
	if n < 2000 {
		t.Fatalf("compared %d citations, want every citation in four windows", n)
	}
}

// citationIDs are the term ids of r's citations, in id order.
func citationIDs(ctx context.Context, r *graph.Reader) ([]graph.ID, error) {
	typ, cls := r.ID(iri(vocab.RDFType)), r.ID(citationClass)
	var ids []graph.ID
	err := r.Subjects(ctx, typ, cls, func(id graph.ID) { ids = append(ids, id) })
	return ids, err
}

// evidenceStore is viewStore with 600 synthetic citations more, half
// under another policy, and extractions of a third of the retrievals
// (current, superseded and soft errors), added after the citations.
func evidenceStore(t *testing.T) *graph.Store {
	ctx := context.Background()
	s, g := viewStore(t)
	recs := storetest.Synthetic(t, synth.Options{Seed: 7, Sites: 30}, 600)
	for i, pol := range []*normalize.Policy{normalize.Default(), normalize.Lenient()} {
		if _, err := s.Append(ctx, store.Batch{Policy: pol, Records: recs[i*300 : (i+1)*300]}); err != nil {
			t.Fatal(err)
		}
	}
	// Extractions on every third retrieval: current, superseded, soft.
	mapper, err := NewMapper(normalize.Default())
	if err != nil {
		t.Fatal(err)
	}
	var rets []graph.Term
	must(t, g.Read(func(r *graph.Reader) error {
		return r.Match(ctx, graph.Quad{P: graph.IRI(vocab.RetrievedIn)}, func(q graph.Quad) error {
			rets = append(rets, q.O)
			return nil
		})
	}))
	var quads []graph.Quad
	for i, ret := range rets {
		switch i % 9 {
		case 0:
			quads, _ = mapper.ExtractionQuads(quads, ret, model.Extraction{Extractor: "x/1", TextDigest: fmt.Sprintf("sha256:%d", i%7), SimHash: fmt.Sprintf("%016x", i*977)})
		case 3:
			quads, _ = mapper.ExtractionQuads(quads, ret, model.Extraction{Extractor: "x/1", TextDigest: "sha256:old"})
			quads, _ = mapper.ExtractionQuads(quads, ret, model.Extraction{Extractor: "x/2", TextDigest: "sha256:new", SimHash: "00000000000000ff"})
		case 6:
			quads, _ = mapper.ExtractionQuads(quads, ret, model.Extraction{Extractor: "x/1", TextDigest: "sha256:soft", SoftError: "login-wall"})
		}
	}
	if _, err := g.Add(quads); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRowSum: the sum of a view's rows does not depend on their order,
// and changes with a row's key or value, a row more or less, or a byte
// moved from a key to its value.
func TestRowSum(t *testing.T) {
	rows := [][2]string{{"k1", "v1"}, {"k2", "v2"}, {"k3", ""}}
	sum := func(rs ...[2]string) rowSum {
		var s rowSum
		for _, r := range rs {
			s.add([]byte(r[0]), []byte(r[1]))
		}
		return s
	}
	base := sum(rows...)
	if got := sum(rows[2], rows[0], rows[1]); got != base {
		t.Errorf("sum in another order %v, want %v", got, base)
	}
	for name, other := range map[string]rowSum{
		"a value changed": sum(rows[0], rows[1], [2]string{"k3", "x"}),
		"a key changed":   sum(rows[0], rows[1], [2]string{"k4", ""}),
		"a row less":      sum(rows[0], rows[1]),
		"a row more":      sum(append(rows, [2]string{"k5", "v5"})...),
		"a row twice":     sum(rows[0], rows[1], rows[1]),
		"a byte moved":    sum(rows[0], rows[1], [2]string{"k", "3"}),
	} {
		if other == base || other.sum == base.sum {
			t.Errorf("%s: the sum did not change", name)
		}
	}
}

// TestViewCheckReportsProgress holds the view check to reporting the
// rows it makes from the quads up to every citation, on each path
// (a scan; point reads on one worker; on three), and the passes over the
// view's rows up to every row.
func TestViewCheckReportsProgress(t *testing.T) {
	defer func(n, m, w int, e int64) {
		viewCheckBatch, viewCheckScanMax, viewCheckWorkers, progressEvery = n, m, w, e
	}(viewCheckBatch, viewCheckScanMax, viewCheckWorkers, progressEvery)
	viewCheckBatch, progressEvery = 2, 3
	s, _ := viewStore(t)
	for _, c := range []struct {
		name             string
		scanMax, workers int
	}{{"scan", 1 << 30, 1}, {"point reads", 0, 1}, {"point reads on 3 workers", 0, 3}} {
		t.Run(c.name, func(t *testing.T) {
			viewCheckScanMax, viewCheckWorkers = c.scanMax, c.workers
			var mu sync.Mutex
			last := map[string]graph.Progress{}
			reports := map[string]int{}
			ctx := graph.WithProgress(context.Background(), func(p graph.Progress) {
				mu.Lock()
				defer mu.Unlock()
				if prev, ok := last[p.Part]; ok && p.Done < prev.Done {
					t.Errorf("part %q went back from %d to %d", p.Part, prev.Done, p.Done)
				}
				last[p.Part] = p
				reports[p.Part]++
			})
			if err := s.CheckViews(ctx); err != nil {
				t.Fatalf("CheckViews = %v", err)
			}
			infos, err := s.Views(ctx)
			if err != nil || len(infos) != 1 {
				t.Fatalf("Views = %v, %v", infos, err)
			}
			name := "view of policy " + infos[0].Policy.String()
			for _, part := range []string{name + ": rows made from the quads", name + ": rows held", name + ": postings the rows give"} {
				p, ok := last[part]
				if !ok {
					t.Errorf("no report of part %q; reported: %v", part, reports)
					continue
				}
				if p.Total != infos[0].Rows || p.Done != p.Total {
					t.Errorf("part %q ends at %d of %d, want %d of %d", part, p.Done, p.Total, infos[0].Rows, infos[0].Rows)
				}
				if reports[part] < 3 {
					t.Errorf("part %q reported %d times, want some between its first and its last", part, reports[part])
				}
			}
		})
	}
}

// TestWindowReleasesAsItReads holds a window's walks to calling their
// release function between the walks and at every node whose links they
// skip, where the view check gives back the pages of the file they
// mapped: each skip seeks in every run of OSP.
func TestWindowReleasesAsItReads(t *testing.T) {
	defer func(n int) { windowNodeLinks = n }(windowNodeLinks)
	windowNodeLinks = 2
	ctx := context.Background()
	g := evidenceStore(t)
	must(t, g.Read(func(r *graph.Reader) error {
		rd := NewReader(ctx, r)
		calls := 0
		if err := rd.SetWindow(1, r.MaxID()+1, func() { calls++ }); err != nil {
			return err
		}
		skipped := 0
		for _, m := range rd.win.many {
			if m {
				skipped++
			}
		}
		if skipped == 0 {
			t.Fatal("no node has more than 2 links into it: the test reads nothing it means to")
		}
		if want := skipped + 3; calls < want {
			t.Errorf("release called %d times for %d nodes skipped, want at least %d", calls, skipped, want)
		}
		return nil
	}))
}

// TestNewRowsAcrossBatches: a NewRows writing an ingest's batches one
// after another writes the view WriteNewViewRows writes batch by batch,
// and keeps the policy it found after the first batch (its node, and no
// LastRun, which changes with each run), for the batches after.
func TestNewRowsAcrossBatches(t *testing.T) {
	ctx := context.Background()
	pol := normalize.Default()
	d := pol.Digest()
	records := storetest.Corpus(t)
	write := func(name string, rows func(w *graph.Writer, cits []Citation) error) (*graph.Store, []string) {
		g, err := graph.Open(filepath.Join(t.TempDir(), name), &graph.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		m, err := NewMapper(pol)
		if err != nil {
			t.Fatal(err)
		}
		for start := 0; start < len(records); start += 3 {
			var quads []graph.Quad
			if start == 0 {
				quads = append(quads, m.PolicyQuads()...)
			}
			var cits []Citation
			for _, r := range records[start:min(start+3, len(records))] {
				var c Citation
				if quads, c, err = m.Quads(quads, r); err != nil {
					t.Fatal(err)
				}
				cits = append(cits, c)
			}
			_, err := g.AddWith(quads, func(w *graph.Writer) error {
				if start == 0 {
					if err := StartView(w, d, time.Unix(0, 0)); err != nil {
						return err
					}
				}
				return rows(w, cits)
			})
			if err != nil {
				t.Fatalf("%s, batch at record %d: %v", name, start, err)
			}
		}
		var dump []string
		err = g.Read(func(r *graph.Reader) error {
			var err error
			dump, err = DumpView(r, d)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return g, dump
	}
	_, want := write("each.db", func(w *graph.Writer, cits []Citation) error {
		return WriteNewViewRows(ctx, w, d, cits)
	})
	var nr NewRows
	g, got := write("kept.db", func(w *graph.Writer, cits []Citation) error {
		return nr.Write(ctx, w, d, cits)
	})
	if !reflect.DeepEqual(got, want) {
		t.Errorf("a NewRows over the batches wrote %d view entries unlike WriteNewViewRows' %d", len(got), len(want))
	}
	if len(want) == 0 {
		t.Fatal("no view entries written")
	}
	p, ok := nr.pols[d]
	if !ok || p.Node == "" || !p.LastRun.IsZero() {
		t.Errorf("NewRows kept %+v (%v) for the policy; want its node and no LastRun", p, ok)
	}
	if err := New(g).Check(ctx); err != nil {
		t.Errorf("check of the view a NewRows wrote: %v", err)
	}
}

// viewDumpOf is the view of policy d in g, entry by entry.
func viewDumpOf(t *testing.T, g *graph.Store, d string) string {
	t.Helper()
	var lines []string
	err := g.Read(func(r *graph.Reader) (err error) {
		lines, err = DumpView(r, d)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestRebuildViewInBatches: a rebuild makes the view the ingest kept,
// whatever its batches, the check's batches of reads within them and
// the window of term ids each reads (cut short, its nodes outside read
// by point lookups), reports its progress batch by batch up to every
// citation.
func TestRebuildViewInBatches(t *testing.T) {
	defer func(n int, w graph.ID) { viewCheckBatch, viewCheckWindow = n, w }(viewCheckBatch, viewCheckWindow)
	s, g := viewStore(t)
	d := normalize.Default().Digest()
	kept := viewDumpOf(t, g, d)
	if !strings.HasPrefix(kept, "complete") {
		t.Fatalf("no complete view kept:\n%s", kept)
	}
	for _, c := range []struct {
		batch, reads int
		window       graph.ID
	}{{0, 4096, 1 << 20}, {1, 4096, 1 << 20}, {5, 2, 1 << 20}, {7, 3, 4}, {100, 1, 1}} {
		viewCheckBatch, viewCheckWindow = c.reads, c.window
		var done []int
		total := -1
		rows, err := s.RebuildView(context.Background(), d, c.batch, func(n, of int) { done, total = append(done, n), of })
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if got := viewDumpOf(t, g, d); got != kept {
			t.Errorf("%+v: the view rebuilt differs from the view kept\nkept:\n%s\nrebuilt:\n%s", c, kept, got)
		}
		if int(rows) != total || len(done) == 0 || done[len(done)-1] != total || !slices.IsSorted(done) {
			t.Errorf("%+v: %d rows, progress %v of %d; want every citation's row, progress rising to it", c, rows, done, total)
		}
		if b := max(c.batch, 0); b > 0 && len(done) != (total+b-1)/b {
			t.Errorf("%+v: %d progress calls for %d citations, want one a batch", c, len(done), total)
		}
		if err := s.Check(context.Background()); err != nil {
			t.Errorf("%+v: check after the rebuild: %v", c, err)
		}
	}
}

// TestRebuildViewCancelled: a rebuild stopped between two batches returns
// the context's error and leaves no view (queries then do without one);
// the next rebuild writes the view as kept.
func TestRebuildViewCancelled(t *testing.T) {
	s, g := viewStore(t)
	d := normalize.Default().Digest()
	kept := viewDumpOf(t, g, d)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	_, err := s.RebuildView(ctx, d, 2, func(int, int) {
		if calls++; calls == 1 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("rebuild cancelled after its first batch: %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Errorf("%d batches written after the cancel, want none", calls-1)
	}
	if has, err := s.HasView(context.Background(), d); err != nil || has {
		t.Errorf("HasView after a cancelled rebuild = %v, %v; want no view", has, err)
	}
	if _, err := s.RebuildView(context.Background(), d, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := viewDumpOf(t, g, d); got != kept {
		t.Errorf("the view rebuilt after a cancelled rebuild differs from the view kept\nkept:\n%s\nrebuilt:\n%s", kept, got)
	}
}

// TestWindowEnd: a batch's window of term ids ends at the next batch's
// first citation, but no further past the batch's last citation than
// twice the median distance between its citations, nor than
// viewCheckWindow past its first; the last batch's window no longer runs
// to the end of the dictionary.
func TestWindowEnd(t *testing.T) {
	defer func(w graph.ID) { viewCheckWindow = w }(viewCheckWindow)
	viewCheckWindow = 1000
	for _, c := range []struct {
		name   string
		ids    []graph.ID
		lo, hi int
		maxID  graph.ID
		want   graph.ID
	}{
		{"next batch's first citation", []graph.ID{10, 30, 50, 70, 90}, 0, 3, 5000, 70},
		{"last batch: twice the median gap past its last", []graph.ID{10, 30, 50, 70, 90}, 3, 5, 5000, 90 + 2*20 + 1},
		{"last batch, dictionary ends first", []graph.ID{10, 30, 50, 70, 90}, 3, 5, 100, 101},
		{"a gap in the batch: the median, not the mean", []graph.ID{10, 30, 500, 520, 540}, 0, 5, 5000, 540 + 2*20 + 1},
		{"a gap before the next batch", []graph.ID{10, 30, 50, 900}, 0, 3, 5000, 50 + 2*20 + 1},
		{"one citation", []graph.ID{10}, 0, 1, 5000, 10 + windowSingle},
		{"one citation, next close", []graph.ID{10, 20}, 0, 1, 5000, 20},
		{"cut at viewCheckWindow", []graph.ID{10, 800, 1600, 2400}, 0, 3, 5000, 10 + 1000},
	} {
		if got := windowEnd(c.ids, c.lo, c.hi, c.maxID); got != c.want {
			t.Errorf("%s: windowEnd(%v, %d, %d, %d) = %d, want %d", c.name, c.ids, c.lo, c.hi, c.maxID, got, c.want)
		}
	}
}
