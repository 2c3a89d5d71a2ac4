package citestore

import (
	"context"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/storetest"
	"github.com/provgraph/provgraph/internal/synth"
)

// recordsStore is viewStore with synthetic citations added (groups of
// several keys, queued and not) and the group records of the default
// policy built, as provgraph queue --build builds them.
func recordsStore(t *testing.T) (*Store, *graph.Store) {
	t.Helper()
	ctx := context.Background()
	s, g := viewStore(t)
	recs := storetest.Synthetic(t, synth.Options{Seed: 5, Sites: 20}, 300)
	if _, err := s.Append(ctx, store.Batch{Policy: normalize.Default(), Records: recs}); err != nil {
		t.Fatal(err)
	}
	d := normalize.Default().Digest()
	rs := s.Records(d, 0)
	must(t, rs.Begin(ctx))
	must(t, query.BuildRecords(ctx, s, d, 0, rs))
	if _, err := rs.Finish(ctx, "build", time.Now()); err != nil {
		t.Fatal(err)
	}
	return s, g
}

// freshOf is service's fresh build: query.BuildRecords through a
// RecordFunc, from the grouping view only when bounded.
func freshOf(s *Store) FreshRecords { return freshFrom(s) }

// freshFrom is freshOf reading src: a source without the view's methods
// makes a bounded build impossible.
func freshFrom(src query.Source) FreshRecords {
	return func(ctx context.Context, d string, maxShared int, bounded bool, put func(*store.GroupRecord) error) error {
		if !bounded {
			return query.BuildRecords(ctx, src, d, maxShared, query.RecordFunc(put))
		}
		built, err := query.BuildRecordsFromView(ctx, src, d, maxShared, query.RecordFunc(put), query.ViewRead{})
		if err == nil && !built {
			err = ErrFreshUnbounded
		}
		return err
	}
}

// recordWhere returns the first record of rb, in id order, that ok
// accepts; the test fails when there is none.
func recordWhere(t *testing.T, rb *graph.Bucket, ok func(*store.GroupRecord) bool) *store.GroupRecord {
	t.Helper()
	ids, _ := rb.Sub(recID, false)
	var found *store.GroupRecord
	must(t, ids.Ascend(nil, func(k, v []byte) (bool, error) {
		r, err := decodeRecord(string(k), v)
		if err != nil {
			return false, err
		}
		if ok(r) {
			found = r
			return false, nil
		}
		return true, nil
	}))
	if found == nil {
		t.Fatal("the records hold no record the damage needs")
	}
	return found
}

func subOf(t *testing.T, rb *graph.Bucket, name string) *graph.Bucket {
	t.Helper()
	b, err := rb.Sub(name, true)
	must(t, err)
	return b
}

func countIn(rb *graph.Bucket, t *testing.T, name string) uint64 {
	v := subOf(t, rb, recCounts).Get([]byte(name))
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// putRecord writes r over the record of its id and nothing else: a
// record altered in place.
func putRecord(t *testing.T, rb *graph.Bucket, r *store.GroupRecord) {
	t.Helper()
	must(t, subOf(t, rb, recID).Put([]byte(r.ID), encodeRecord(r)))
}

// TestCheckRecords: records as built pass check, compared with a fresh
// build; each kind of damage is found by the pass that should find it
// (the structural pass: found without a fresh build; the comparison:
// found only with one) and named with the policy, --max-shared, the
// group or key, what is wrong and the command that rebuilds them, as
// damage (graph.ErrCorrupt). The comparison finds the same with the
// fresh build grouped whole (a small database) and read from the
// grouping view a batch at a time (past viewCheckScanMax).
func TestCheckRecords(t *testing.T) {
	for _, tc := range []struct {
		name    string
		scanMax int
	}{{"whole grouping", 1 << 30}, {"from the view", 0}} {
		t.Run(tc.name, func(t *testing.T) { testCheckRecords(t, tc.scanMax) })
	}
}

func testCheckRecords(t *testing.T, scanMax int) {
	ctx := context.Background()
	d := normalize.Default().Digest()
	defer func(n, m, b int) { viewCheckBatch, viewCheckScanMax, compareBatch = n, m, b }(viewCheckBatch, viewCheckScanMax, compareBatch)
	viewCheckBatch, viewCheckScanMax, compareBatch = 3, scanMax, 4 // the passes' and batches' seams

	s, _ := recordsStore(t)
	checks, err := s.CheckAll(ctx, freshOf(s))
	if err != nil {
		t.Fatalf("check of records as built: %v", err)
	}
	if len(checks) != 1 || !checks[0].Compared || checks[0].Groups < 20 || checks[0].MaxShared != model.DefaultMaxShared || checks[0].Skipped != "" {
		t.Fatalf("check of records as built = %+v, want one set of records, compared", checks)
	}

	multi := func(r *store.GroupRecord) bool { return len(r.Keys) > 1 }
	queued := func(r *store.GroupRecord) bool { return r.Queued }
	single := func(r *store.GroupRecord) bool { return !r.Queued }
	for _, tc := range []struct {
		name string
		// structural: found without a fresh build; else only by the
		// comparison.
		structural bool
		damage     func(t *testing.T, rb *graph.Bucket) string // returns what the problem must name
	}{
		{"key entry removed", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, multi)
			must(t, subOf(t, rb, recKey).Delete([]byte(r.Keys[1])))
			return "group " + r.ID + ": its key " + r.Keys[1] + " has no key -> id entry"
		}},
		{"key entry naming another group", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, multi)
			other := recordWhere(t, rb, func(o *store.GroupRecord) bool { return o.ID != r.ID })
			must(t, subOf(t, rb, recKey).Put([]byte(r.Keys[1]), []byte(other.ID)))
			return "group " + r.ID + ": its key " + r.Keys[1] + " has a key -> id entry naming group " + other.ID
		}},
		{"key entry of no record's key", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, multi)
			must(t, subOf(t, rb, recKey).Put([]byte("https://nowhere.test/"), []byte(r.ID)))
			return "the key -> id entry of key https://nowhere.test/ names group " + r.ID + ", whose keys do not include it"
		}},
		{"key entry naming no record", true, func(t *testing.T, rb *graph.Bucket) string {
			must(t, subOf(t, rb, recKey).Put([]byte("https://nowhere.test/"), []byte("g-000000000000")))
			return "the key -> id entry of key https://nowhere.test/ names group g-000000000000, which has no record"
		}},
		{"queue entry removed", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			must(t, subOf(t, rb, recQueue).Delete(queueKey(r)))
			return "group " + r.ID + " is queued, but the queue lacks it (under its smallest key " + r.Key + ")"
		}},
		{"extra queue entry of a group not queued", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, single)
			must(t, subOf(t, rb, recQueue).Put(queueKey(r), nil))
			return "the queue holds group " + r.ID + ", whose record is not queued"
		}},
		{"extra queue entry of no record", true, func(t *testing.T, rb *graph.Bucket) string {
			must(t, subOf(t, rb, recQueue).Put(rowKey("https://nowhere.test/", "g-000000000000"), nil))
			return "the queue holds group g-000000000000 (under key https://nowhere.test/), which has no record"
		}},
		{"queue entry out of order", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			must(t, subOf(t, rb, recQueue).Put(rowKey("https://zzz.test/", r.ID), nil))
			return "the queue holds group " + r.ID + " under key https://zzz.test/, out of its order: its smallest key is " + r.Key
		}},
		{"count of groups altered", true, func(t *testing.T, rb *graph.Bucket) string {
			n := countIn(rb, t, "groups")
			must(t, subOf(t, rb, recCounts).Put([]byte("groups"), binary.BigEndian.AppendUint64(nil, n+1)))
			return "the count groups says " + itoa(n+1) + ", the records give " + itoa(n)
		}},
		{"count of a verdict removed", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			n := countIn(rb, t, "verdict:"+r.Verdict)
			must(t, subOf(t, rb, recCounts).Delete([]byte("verdict:"+r.Verdict)))
			return "the count verdict:" + r.Verdict + " is missing, the records give " + itoa(n)
		}},
		{"record undecodable", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			must(t, subOf(t, rb, recID).Put([]byte(r.ID), []byte{2, 0x80}))
			return "the record of group " + r.ID + " does not decode: member count unreadable"
		}},
		{"record with a verdict provgraph does not give", true, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			r.Verdict = "maybe"
			putRecord(t, rb, r)
			return `group ` + r.ID + `: its verdict "maybe" is none provgraph gives`
		}},
		{"record's members altered", false, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			r.Members++
			putRecord(t, rb, r)
			return "group " + r.ID + ": its record has members " + itoa(uint64(r.Members)) + ", a fresh build gives " + itoa(uint64(r.Members-1)) + " (first difference)"
		}},
		{"record's verdict altered, counts with it", false, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			was := r.Verdict
			r.Verdict = model.VerdictConflict
			if was == r.Verdict {
				r.Verdict = model.VerdictNormalizedCompare
			}
			tx, err := openRecTx(rb)
			must(t, err)
			must(t, tx.put(r))
			must(t, tx.writeCounts())
			return "group " + r.ID + ": its record has the verdict " + r.Verdict + ", a fresh build gives " + was + " (first difference)"
		}},
		{"record removed with its entries", false, func(t *testing.T, rb *graph.Bucket) string {
			r := recordWhere(t, rb, queued)
			tx, err := openRecTx(rb)
			must(t, err)
			must(t, tx.delete(r.ID))
			must(t, tx.writeCounts())
			return "a fresh build has group " + r.ID + " (key " + r.Key + "), which has no record (first difference)"
		}},
		{"record added with its entries", false, func(t *testing.T, rb *graph.Bucket) string {
			tx, err := openRecTx(rb)
			must(t, err)
			must(t, tx.put(&store.GroupRecord{ID: "g-000000000000", Key: "https://nowhere.test/", Keys: []string{"https://nowhere.test/"}, Members: 1, Verdict: model.VerdictNormalizedCompare}))
			must(t, tx.writeCounts())
			return "group g-000000000000 (key https://nowhere.test/) has a record, but a fresh build has no group with this id (first difference)"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, g := recordsStore(t)
			var want string
			must(t, g.Update(func(w *graph.Writer) error {
				rb, err := w.View(d).Sub(recordsName(0), false)
				must(t, err)
				want = tc.damage(t, rb)
				return nil
			}))
			structErr := s.Check(ctx)
			if !tc.structural {
				if structErr != nil {
					t.Fatalf("check without a fresh build of records damaged (%s), structurally sound: %v", tc.name, structErr)
				}
				_, structErr = s.CheckAll(ctx, freshOf(s))
			}
			if !errors.Is(structErr, graph.ErrCorrupt) {
				t.Fatalf("check of records damaged (%s) = %v, want ErrCorrupt", tc.name, structErr)
			}
			for _, w := range []string{"group records of policy provgraph-default@", ", --max-shared 3: ", want,
				"(rebuild them: provgraph queue --build --db " + g.Path() + " --policy " + d + " --max-shared 3)"} {
				if !strings.Contains(structErr.Error(), w) {
					t.Errorf("check of records damaged (%s) = %q, want it to say %q", tc.name, structErr, w)
				}
			}
		})
	}
}

func itoa(n uint64) string { return strconv.FormatUint(n, 10) }

// TestCheckRecordsNotCompared: records behind changed keys (dirty), and
// records of a database past viewCheckScanMax citations whose fresh build
// could only group every citation in memory, are checked structurally
// only: a record that differs from a fresh build is then
// not reported, the check says why it did not compare, and structural
// damage is still found. Records without their marker are not checked.
func TestCheckRecordsNotCompared(t *testing.T) {
	ctx := context.Background()
	d := normalize.Default().Digest()
	defer func(m int) { viewCheckScanMax = m }(viewCheckScanMax)
	alter := func(t *testing.T, g *graph.Store, also func(t *testing.T, rb *graph.Bucket)) {
		must(t, g.Update(func(w *graph.Writer) error {
			rb, err := w.View(d).Sub(recordsName(0), false)
			must(t, err)
			r := recordWhere(t, rb, func(r *store.GroupRecord) bool { return r.Queued })
			r.Members++
			putRecord(t, rb, r)
			also(t, rb)
			return nil
		}))
	}
	for _, tc := range []struct {
		name    string
		scanMax int
		setup   func(t *testing.T, rb *graph.Bucket)
		want    func(c RecordsCheck) bool
	}{
		{"behind a changed key", 1 << 30, func(t *testing.T, rb *graph.Bucket) {
			must(t, subOf(t, rb, recDirty).Put([]byte("https://changed.test/"), nil))
		}, func(c RecordsCheck) bool { return c.Dirty == 1 && strings.Contains(c.NotCompared, "behind") }},
		{"past the scan bound, without a view to read a batch at a time", 0, func(*testing.T, *graph.Bucket) {},
			func(c RecordsCheck) bool {
				return c.Dirty == 0 && strings.Contains(c.NotCompared, "more than 0 citations, and its grouping view cannot be read a batch at a time")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			viewCheckScanMax = tc.scanMax
			s, g := recordsStore(t)
			alter(t, g, tc.setup)
			// A source with only query.Source's methods: no view to read.
			fresh := freshFrom(struct{ query.Source }{s})
			checks, err := s.CheckAll(ctx, fresh)
			if err != nil {
				t.Fatalf("check of records %s: %v, want them checked structurally only", tc.name, err)
			}
			if len(checks) != 1 || checks[0].Compared || len(checks[0].Problems) != 0 || checks[0].Groups == 0 || !tc.want(checks[0]) {
				t.Fatalf("check of records %s = %+v, want them not compared, and why", tc.name, checks)
			}
			// Structural damage is found all the same.
			must(t, g.Update(func(w *graph.Writer) error {
				rb, err := w.View(d).Sub(recordsName(0), false)
				must(t, err)
				return subOf(t, rb, recCounts).Put([]byte("groups"), binary.BigEndian.AppendUint64(nil, 1))
			}))
			if _, err := s.CheckAll(ctx, fresh); !errors.Is(err, graph.ErrCorrupt) || !strings.Contains(err.Error(), "the count groups says 1") {
				t.Errorf("check of records %s, with a count altered = %v, want the count named", tc.name, err)
			}
		})
	}

	t.Run("incomplete", func(t *testing.T) {
		viewCheckScanMax = 1 << 30
		s, g := recordsStore(t)
		alter(t, g, func(t *testing.T, rb *graph.Bucket) { must(t, rb.Delete([]byte(recComplete))) })
		checks, err := s.CheckAll(ctx, freshOf(s))
		if err != nil || len(checks) != 1 || !strings.HasPrefix(checks[0].Skipped, "incomplete") || checks[0].Compared {
			t.Fatalf("check of records without their marker = %+v, %v; want them skipped as incomplete", checks, err)
		}
	})
}
