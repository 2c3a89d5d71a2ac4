package graph

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/bbolt"
)

// TestPagerResidentLimit: a pager drops the mapped pages when more of the
// file is mapped than its limit, and also, under that limit, when the
// mapped pages and the anonymous memory together pass its resident limit
// (a large merge holding its output); not otherwise, and never for the
// resident limit when it is off.
func TestPagerResidentLimit(t *testing.T) {
	s := pagerStore(t)
	const mib = 1 << 20
	for _, c := range []struct {
		name            string
		file, anon      int64
		limit, resident int64
		release         bool
	}{
		{"under both", 100 * mib, 500 * mib, 256 * mib, 896 * mib, false},
		{"mapped past its limit", 300 * mib, 100 * mib, 256 * mib, 896 * mib, true},
		{"together past the resident limit", 100 * mib, 800 * mib, 256 * mib, 896 * mib, true},
		{"resident limit off", 100 * mib, 800 * mib, 256 * mib, 0, false},
		{"resident limit negative", 100 * mib, 800 * mib, 256 * mib, -1, false},
		{"mapped limit off", 100 * mib, 800 * mib, 0, 896 * mib, false},
	} {
		residentMemory = func() (int64, int64, bool) { return c.file, c.anon, true }
		released := false
		p := &pager{db: s.db, limit: c.limit, resident: c.resident, onRelease: func() { released = true }}
		p.check(0)
		if released != c.release {
			t.Errorf("%s: released %v, want %v", c.name, released, c.release)
		}
	}
}

// TestPagerDuring: while a call the pager cannot count runs (bbolt's
// DeleteBucket walking every page of a run), during looks at the mapped
// pages on its own goroutine and releases them past the limits, and not
// under them; once the call returns, it checks once.
func TestPagerDuring(t *testing.T) {
	s := pagerStore(t)
	const mib = 1 << 20
	for _, c := range []struct {
		name    string
		file    int64
		release bool
	}{{"under the limit", 100 * mib, false}, {"past the limit", 300 * mib, true}} {
		residentMemory = func() (int64, int64, bool) { return c.file, 0, true }
		looks := make(chan bool, 64)
		checks := 0
		p := &pager{db: s.db, limit: 256 * mib, // size 0: nothing is dropped
			onWatch: func(released bool) {
				select {
				case looks <- released:
				default:
				}
			},
			onCheck: func() { checks++ }}
		err := p.during(func() error {
			// The call lasts until the goroutine has looked three times.
			for range 3 {
				select {
				case released := <-looks:
					if released != c.release {
						t.Errorf("%s: a look released %v, want %v", c.name, released, c.release)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("%s: no look at the mapped pages in 10 s", c.name)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if checks != 1 {
			t.Errorf("%s: %d checks after the call, want 1", c.name, checks)
		}
	}
	// A pager without a limit runs the call and nothing else.
	var nilPager *pager
	ran := false
	if err := nilPager.during(func() error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("nil pager: ran %v, err %v", ran, err)
	}
}

// TestPagerWatchDuringCommits: a pager's watcher releases the mapped
// pages while writes commit and grow the file, bbolt remapping it under
// the watcher (update's commits, whose every look here is past the
// limit), and everything written reads back right after; stop ends the
// watcher, which looks no more.
func TestPagerWatchDuringCommits(t *testing.T) {
	s := pagerStore(t)
	if s.pg == nil {
		t.Fatal("the store has no pager")
	}
	residentMemory = func() (int64, int64, bool) { return s.pg.limit + 1, 0, true }
	var releases atomic.Int64
	s.pg.onRelease = func() { releases.Add(1) }
	defer func() { s.pg.onRelease = nil }()
	stop := s.pg.watch()
	// Each batch writes a megabyte of new values, so the file outgrows
	// its mapping (bbolt doubles it up to a gigabyte) several times.
	value := make([]byte, 64<<10)
	for batch := range 24 {
		err := s.update(func(tx *bbolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("watch-test"))
			if err != nil {
				return err
			}
			for i := range 16 {
				v := make([]byte, len(value)) // bbolt keeps it until the commit
				v[0], v[1] = byte(batch), byte(i)
				if err := b.Put([]byte(fmt.Sprintf("%02d-%02d", batch, i)), v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The watcher looks every watchEvery: wait for a release, not a time.
	deadline := time.Now().Add(10 * time.Second)
	for releases.Load() == 0 && time.Now().Before(deadline) {
		runtime.Gosched()
	}
	stop()
	if releases.Load() == 0 {
		t.Fatal("the watcher released nothing in 10 s while past the limit")
	}
	after := releases.Load()
	err := s.db.View(func(tx *bbolt.Tx) error {
		b := tx.Bucket([]byte("watch-test"))
		for batch := range 24 {
			for i := range 16 {
				v := b.Get([]byte(fmt.Sprintf("%02d-%02d", batch, i)))
				if len(v) != len(value) || v[0] != byte(batch) || v[1] != byte(i) {
					return fmt.Errorf("value %02d-%02d reads back wrong (%d bytes)", batch, i, len(v))
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := releases.Load(); got != after {
		t.Errorf("%d releases after stop", got-after)
	}
}

// pagerStore opens a store for a pager test, and puts residentMemory back
// when the test ends (the tests replace it).
func pagerStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "p.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := residentMemory
	t.Cleanup(func() { residentMemory = f })
	return s
}

// TestLimitReads: one-shot reads (Objects, as ingest's validation pass
// looks up the stored digest of each citation id) look at the mapped
// pages every mappedCheckEvery reads, and release them past the store's
// mapped limit, not under it; their answers stay right across releases.
func TestLimitReads(t *testing.T) {
	s := pagerStore(t)
	var quads []Quad
	for i := range 200 {
		quads = append(quads, Quad{S: IRI(fmt.Sprintf("https://example.com/c/%d", i)), P: IRI("https://example.com/digest"), O: String(fmt.Sprint("d", i))})
	}
	if _, err := s.Add(quads); err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	for _, c := range []struct {
		name   string
		mapped int64
		want   int
	}{{"under the limit", 10 * mib, 0}, {"past the limit", s.limit + mib, 3}} {
		residentMemory = func() (int64, int64, bool) { return c.mapped, 0, true }
		released := 0
		s.onReadRelease = func() { released++ }
		s.reads.Store(0)
		for i := range 3 * mappedCheckEvery {
			os, err := s.Objects(quads[i%len(quads)].S, quads[0].P)
			if err != nil {
				t.Fatal(err)
			}
			if len(os) != 1 || os[0] != quads[i%len(quads)].O {
				t.Fatalf("%s: read %d gave %v, want %v", c.name, i, os, quads[i%len(quads)].O)
			}
		}
		if released != c.want {
			t.Errorf("%s: %d releases in %d reads, want %d", c.name, released, 3*mappedCheckEvery, c.want)
		}
	}
}

// TestTrimMapped: TrimMapped releases the mapped pages past the store's
// limit, and only then, whatever transactions are open; the data reads
// back unchanged after a release.
func TestTrimMapped(t *testing.T) {
	s := pagerStore(t)
	var quads []Quad
	for i := range 100 {
		quads = append(quads, Quad{S: IRI(fmt.Sprintf("https://example.com/c/%d", i)), P: IRI("https://example.com/digest"), O: String(fmt.Sprint("d", i))})
	}
	if _, err := s.Add(quads); err != nil {
		t.Fatal(err)
	}
	f := residentMemory
	t.Cleanup(func() { residentMemory = f })
	released := 0
	s.onReadRelease = func() { released++ }
	const mib = 1 << 20
	for _, c := range []struct {
		name   string
		mapped int64
		want   bool
	}{{"under the limit", s.limit - mib, false}, {"at the limit", s.limit, false}, {"past the limit", s.limit + mib, true}} {
		residentMemory = func() (int64, int64, bool) { return c.mapped, 0, true }
		released = 0
		// During another read: the release holds a transaction of its own.
		err := s.Read(func(r *Reader) error {
			if got := s.TrimMapped(); got != c.want {
				t.Errorf("%s: TrimMapped %v, want %v", c.name, got, c.want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: 1}[c.want]; released != want {
			t.Errorf("%s: %d releases, want %d", c.name, released, want)
		}
		for _, q := range quads {
			os, err := s.Objects(q.S, q.P)
			if err != nil || len(os) != 1 || os[0] != q.O {
				t.Fatalf("%s: after TrimMapped %v reads %v, %v", c.name, q.S, os, err)
			}
		}
	}
	residentMemory = func() (int64, int64, bool) { return 0, 0, false }
	if s.TrimMapped() {
		t.Error("TrimMapped released with the memory unknown")
	}
}

// TestWatchMapped: while any caller of WatchMapped has not said it is
// done, one watcher releases the mapped pages past the limit; a done
// called twice counts once; after the last is done the watcher is gone,
// and the next caller starts one again.
func TestWatchMapped(t *testing.T) {
	s := pagerStore(t)
	if _, err := s.Add([]Quad{{S: IRI("https://example.com/a"), P: IRI("https://example.com/p"), O: String("v")}}); err != nil {
		t.Fatal(err)
	}
	f := residentMemory
	t.Cleanup(func() { residentMemory = f })
	var over atomic.Bool
	residentMemory = func() (int64, int64, bool) {
		if over.Load() {
			return s.limit + 1, 0, true
		}
		return 0, 0, true
	}
	releases := make(chan struct{}, 1)
	var n atomic.Int64
	s.onReadRelease = func() {
		n.Add(1)
		select {
		case releases <- struct{}{}:
		default:
		}
	}
	a := s.WatchMapped()
	b := s.WatchMapped()
	over.Store(true)
	<-releases // the watcher saw the pages past the limit
	a()
	a() // counts once: b keeps the watcher
	<-releases
	<-releases
	b()
	s.watchMu.Lock()
	if s.watching != 0 || s.stopWatch != nil {
		t.Errorf("after the last done: %d watching, watcher %v", s.watching, s.stopWatch != nil)
	}
	s.watchMu.Unlock()
	// A later caller starts a watcher again.
	c := s.WatchMapped()
	<-releases
	c()
}

// TestMatchLimitsMapped: a Match looks at the mapped pages every
// matchCheckEvery quads it reads and releases them past the limit, and
// only then; every quad is still read.
func TestMatchLimitsMapped(t *testing.T) {
	s := pagerStore(t)
	var quads []Quad
	for i := range 2*matchCheckEvery + 10 {
		quads = append(quads, Quad{S: IRI(fmt.Sprintf("https://example.com/c/%d", i)), P: IRI("https://example.com/p"), O: String(fmt.Sprint(i))})
	}
	if _, err := s.Add(quads); err != nil {
		t.Fatal(err)
	}
	f := residentMemory
	t.Cleanup(func() { residentMemory = f })
	for _, c := range []struct {
		name   string
		mapped int64
		want   int
	}{{"under the limit", s.limit - 1, 0}, {"past the limit", s.limit + 1, 2}} {
		residentMemory = func() (int64, int64, bool) { return c.mapped, 0, true }
		released := 0
		s.onReadRelease = func() { released++ }
		s.reads.Store(1) // limitReads, at the match's end, does not look
		n := 0
		if err := s.Match(context.Background(), Quad{P: IRI("https://example.com/p")}, func(Quad) error { n++; return nil }); err != nil {
			t.Fatal(err)
		}
		if n != len(quads) || released != c.want {
			t.Errorf("%s: %d quads read, %d releases; want %d and %d", c.name, n, released, len(quads), c.want)
		}
	}
}
