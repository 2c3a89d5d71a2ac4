package citestore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Check implements store.Checker: graph.Store.Check, then every grouping
// view against the quads (CheckViews), then the structure of every set
// of group records (CheckRecords without a fresh build: citestore cannot
// make one; service's check compares them with one).
func (s *Store) Check(ctx context.Context) error {
	_, err := s.CheckAll(ctx, nil)
	return err
}

// CheckViews verifies each complete view against the quads: every
// citation's row as the quads give it (read as a view rebuild reads it)
// is in the view, equal; the view holds no other row and as many as its
// row count says; and each key's postings, made from its rows in one
// ordered pass, are in the posting buckets, which hold no others. A
// difference is a problem naming the policy and the first differing key
// and citation id or posting; the error wraps graph.ErrCorrupt. An
// incomplete view (an interrupted rebuild) is not used and not checked.
//
// Its memory does not grow with the database beyond 4 bytes a citation:
// the citations are read in batches of viewCheckBatch, each batch's nodes
// in a window of term ids read by ordered walks and the nodes outside it
// by point lookups (rowsAt), with the mapped pages of the file kept under
// viewCheckMapped, and the
// postings are compared as two sums (rowSum), looked up a key at a time
// only when they differ. (Comparing with a scan, as
// grouping reads the citations, needed the memory of a full grouping: 1.9
// GB at a million citations.)
func (s *Store) CheckViews(ctx context.Context) error {
	problems, err := s.viewProblems(ctx)
	if err != nil {
		return err
	}
	return s.corrupt(problems)
}

// viewProblems is CheckViews' problems.
func (s *Store) viewProblems(ctx context.Context) ([]string, error) {
	infos, err := s.Views(ctx)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, info := range infos {
		if !info.Complete {
			continue
		}
		ps, err := s.checkView(ctx, info)
		if err != nil {
			return nil, err
		}
		problems = append(problems, ps...)
	}
	return problems, nil
}

// corrupt is the error of check's problems, nil when there are none.
func (s *Store) corrupt(problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	return &graph.Error{Op: "check", Path: s.g.Path(), Err: fmt.Errorf("%w:\n\t%s", graph.ErrCorrupt, strings.Join(problems, "\n\t"))}
}

// viewCheckBatch is how many citations the view check reads with one
// Reader (whose caches it then drops). A variable so that tests run the
// batches' seams.
var viewCheckBatch = 4096

// viewCheckMapped is how much of the file the view check's point reads
// keep mapped, looked at every viewCheckEvery citations. The reads of
// each citation's own quads and terms go by pread (graph.Reader.InOrder)
// and map nothing; what stays mapped is what its lookups in POS and OSP
// read, above all the runs' filters, which every lookup probes (546 MB at
// ten million citations), and which a release spares up to three
// quarters of the limit (graph.Reader.LimitMapped). At ten million
// citations (build of this comment, the 10.6 GB file in the page cache,
// 100 s each): 640 MiB read 7,900 citations a second with a peak RSS of
// 876 MB, 768 MiB 10,700 a second (as fast as no limit) and 934 MB, but
// over a whole check 1,101 MB (the pages mapped between two looks). At
// 512 MiB looked at every 256 citations it read 2,200 a second sparing
// the filters, and fewer than 102,400 citations in 150 s sparing nothing.
// Linux maps up to 16 pages around each fault, so the mapped pages grow
// fast between two looks: hence a look every 32 citations (a read of
// /proc/self/statm, 1.3 µs).
// 704 MiB still spares all the filters at ten million citations (528
// MiB).
const (
	viewCheckMapped = 704 << 20
	viewCheckEvery  = 32
)

func (s *Store) checkView(ctx context.Context, info store.ViewInfo) ([]string, error) {
	d := info.Policy.Digest
	name := "view of policy " + info.Policy.String()
	if info.Policy.Node == "" {
		return []string{fmt.Sprintf("view %s: the database holds no policy with this digest (run provgraph view rebuild, or remove the view)", d)}, nil
	}
	keyOf, exact := policyKeyOf(info.Policy), engineSame(info.Policy)
	var problems []string
	problem := func(format string, args ...any) {
		if len(problems) < 10 {
			problems = append(problems, name+": "+fmt.Sprintf(format, args...))
		}
	}
	firstDiff := true
	diff := func(format string, args ...any) {
		if firstDiff {
			problem(format, args...)
			firstDiff = false
		}
	}
	err := s.within(func(r *graph.Reader) error {
		b := r.View(d)
		if b == nil {
			return nil
		}
		// The run maps' own rules (FORMAT.md "Run maps"): each run as
		// its meta says, its filter holding every prefix.
		if string(b.Get([]byte(viewLayout))) == layoutRuns {
			graph.ReportProgress(ctx, graph.Progress{Part: name + ": its sorted runs"})
			for _, sub := range append([]string{subRows}, postingSubs...) {
				m, err := b.Runs(sub, viewPrefixer(sub), false)
				if err != nil {
					return err
				}
				if m == nil {
					continue
				}
				ps, err := m.Check(10, func() { r.LimitMapped(viewCheckMapped) })
				if err != nil {
					return err
				}
				for _, p := range ps {
					problem("map %s: %s", sub, p)
				}
			}
		}
		rows, err := openViewMap(b, subRows, false)
		if err != nil {
			return err
		}
		// Every citation's row, as the quads give it, is in the view: the
		// rows made from the quads and the view's, as two multisets
		// (rowSum), and when they differ, each made row looked up in the
		// view to name the first difference.
		var matched int64
		made, err := s.citationRows(ctx, r, info.Policy, hasMembers(b), nil)
		if err != nil {
			return err
		}
		var held rowSum
		if rows != nil {
			prog := startProgress(ctx, name+": rows held", "rows", storedCount(b.Get([]byte(viewRowsCount))))
			n := 0
			err := rows.Ascend(nil, func(k, v []byte) (bool, error) {
				prog.add(1)
				if n++; n%viewCheckBatch == 0 {
					if err := ctx.Err(); err != nil {
						return false, err
					}
					r.LimitMapped(viewCheckMapped)
				}
				held.add(k, v)
				return true, nil
			})
			prog.end()
			if err != nil {
				return err
			}
		}
		if held == made {
			matched = made.n
		} else if matched, err = s.checkCitationRows(ctx, r, info.Policy, hasMembers(b), rows, diff); err != nil {
			return err
		}
		// The view's rows, in key order: their count, and the postings
		// of each key.
		var rowsSeen int64
		given := map[string]int{}
		have := map[string]viewMap{}
		for _, sub := range postingSubs {
			if have[sub], err = openViewMap(b, sub, false); err != nil {
				return err
			}
		}
		// The postings the rows give and the posting maps' entries are
		// compared as two multisets first (rowSum of sub and entry),
		// each made in one ordered pass; only when they differ is each
		// given posting looked up, to name what is missing or stray. (A
		// lookup each, at random in the posting maps, took most of the
		// check's last hour at ten million citations.)
		var madeP, heldP rowSum
		firstMissing, nMissing := map[string]string{}, map[string]int{}
		keyPostings := map[posting]bool{}
		curKey := ""
		lookup := false
		flush := func() {
			for p := range keyPostings {
				if !exact && (p.sub == subRedirect || p.sub == subRelation) {
					continue // targets made by another engine: grouping does not use the view
				}
				if !lookup {
					given[p.sub]++
					madeP.add([]byte(p.sub), []byte(p.key))
					continue
				}
				if pb := have[p.sub]; pb == nil || pb.Get([]byte(p.key)) == nil {
					if f, ok := firstMissing[p.sub]; !ok || p.key < f {
						firstMissing[p.sub] = p.key
					}
					nMissing[p.sub]++
				}
			}
			clear(keyPostings)
		}
		pass := func() error {
			if rows == nil {
				return nil
			}
			part := name + ": postings the rows give"
			if lookup {
				part = name + ": postings looked up"
			}
			prog := startProgress(ctx, part, "rows", storedCount(b.Get([]byte(viewRowsCount))))
			defer prog.end()
			n := 0
			curKey = ""
			err := rows.Ascend(nil, func(k, v []byte) (bool, error) {
				prog.add(1)
				// With lookups, at random in the posting maps: looked
				// at as often as citations are.
				if n++; n%viewCheckEvery == 0 && lookup || n%viewCheckBatch == 0 {
					if err := ctx.Err(); err != nil {
						return false, err
					}
					r.LimitMapped(viewCheckMapped)
				}
				row, err := decodeRow(k, v)
				if !lookup {
					rowsSeen++
					if err != nil {
						problem("%v", err)
					}
				}
				if err != nil {
					return true, nil
				}
				if row.Key != curKey {
					flush()
					curKey = row.Key
				}
				for _, p := range postingsOf(nil, row, keyOf) {
					keyPostings[p] = true
				}
				return true, nil
			})
			if err != nil {
				return err
			}
			flush()
			return nil
		}
		if err := pass(); err != nil {
			return err
		}
		found := map[string]int{}
		for _, sub := range postingSubs {
			pb := have[sub]
			if pb == nil || !exact && (sub == subRedirect || sub == subRelation) {
				continue
			}
			err := pb.Ascend(nil, func(k, _ []byte) (bool, error) {
				found[sub]++
				heldP.add([]byte(sub), k)
				return true, nil
			})
			if err != nil {
				return err
			}
		}
		if madeP != heldP {
			lookup = true
			if err := pass(); err != nil {
				return err
			}
		}
		if rowsSeen > matched {
			if err := s.findStrayRow(ctx, r, info.Policy, rows, diff); err != nil {
				return err
			}
		}
		if c := b.Get([]byte(viewRowsCount)); len(c) != 8 || int64(binary.BigEndian.Uint64(c)) != rowsSeen {
			problem("its row count says %d, it holds %d rows", countOf(c), rowsSeen)
		}
		for _, sub := range postingSubs {
			if !exact && (sub == subRedirect || sub == subRelation) {
				continue
			}
			if m := nMissing[sub]; m > 0 {
				problem("posting bucket %s lacks %q, which the rows give (%d missing)", sub, firstMissing[sub], m)
			}
			pb := have[sub]
			if pb == nil || madeP == heldP {
				continue
			}
			if found[sub] > given[sub]-nMissing[sub] {
				stray, err := findStrayPosting(pb, rows, sub, keyOf)
				if err != nil {
					return err
				}
				problem("posting bucket %s holds %s, which no row gives", sub, stray)
			}
		}
		return nil
	})
	return problems, err
}

// viewCheckScanMax is the most citations whose rows check makes with a
// scan (store.ScanViewRows, as grouping reads them: about 2 KB of memory
// a citation, 2.1 GB peak RSS at a million); past it, the citations are
// read a batch at a time (rowsAt), in memory that does not grow with the
// database. By point lookups alone that cost about five times the CPU of
// the scan (at a million citations, 385 s against 69 s, 802 MB against
// 2.1 GB peak RSS); with a window of term ids per batch, the whole check
// of a million took 66 and 69 s of user CPU against 102 s by point
// lookups alone, at 424 MB peak RSS against 390 MB.
// A variable so that tests run both.
var viewCheckScanMax = 250_000

// rowSum is a multiset of a view's rows, as stored (key and value), kept
// in constant memory: how many, and the sum of each row's SHA-256 taken as
// four 64-bit words, each summed on its own. Two sums are equal when the
// rows are, and otherwise all but certainly unequal (a damaged row or a
// lost one changes a 256-bit digest's share); it is not a defence against
// rows chosen to collide, which damage does not choose. check compares the
// rows the quads give with the view's this way, in any order, without a
// point lookup each, and looks rows up one by one only when the sums
// differ, to name the first difference.
type rowSum struct {
	n   int64
	sum [4]uint64
}

// merge adds the rows of o to s.
func (s *rowSum) merge(o rowSum) {
	s.n += o.n
	for i := range s.sum {
		s.sum[i] += o.sum[i]
	}
}

// addRow adds the view row r, as stored.
func (s *rowSum) addRow(r store.ViewRow) { s.add(rowKey(r.Key, r.CitationID), encodeRow(r)) }

func (s *rowSum) add(k, v []byte) {
	h := sha256.New()
	var l [binary.MaxVarintLen64]byte
	h.Write(l[:binary.PutUvarint(l[:], uint64(len(k)))])
	h.Write(k)
	h.Write(v)
	var d [sha256.Size]byte
	h.Sum(d[:0])
	s.n++
	for i := range s.sum {
		s.sum[i] += binary.LittleEndian.Uint64(d[8*i:])
	}
}

// citationRows makes every citation's row from the quads and returns
// their rowSum, calling each (when not nil) with every row. Up to
// viewCheckScanMax citations it makes the rows with a scan; past it, it
// reads each citation lean, in batches of viewCheckBatch (rowsAt: one
// Reader, emptied each batch and given the batch's window of term ids,
// the mapped pages of the file kept under viewCheckMapped), so that its
// memory is 4 bytes a citation (their term ids) and a batch, whatever the
// size of the database.
func (s *Store) citationRows(ctx context.Context, r *graph.Reader, pol store.PolicyRef, members bool, each func(store.ViewRow)) (rowSum, error) {
	var sum rowSum
	var prog *partProgress
	add := func(row store.ViewRow) {
		sum.addRow(row)
		if each != nil {
			each(row)
		}
		prog.add(1)
	}
	typ, cls := r.ID(iri(vocab.RDFType)), r.ID(citationClass)
	var ids []graph.ID
	if typ != 0 && cls != 0 {
		// The walk maps the runs' pages of every citation's type, and
		// Linux maps up to 15 neighbours of each: at ten million
		// citations 440 MB were left mapped when it was not limited as
		// it went, and the first lookups then map the runs' filters on
		// top (peak RSS 1,068 MiB). A quarter of the limit leaves room
		// for the filters.
		err := r.Subjects(ctx, typ, cls, func(id graph.ID) {
			if ids = append(ids, id); len(ids)%viewCheckBatch == 0 {
				r.LimitMapped(viewCheckMapped / 4)
			}
		})
		if err != nil {
			return sum, err
		}
	}
	prog = startProgress(ctx, "view of policy "+pol.String()+": rows made from the quads", "citations", int64(len(ids)))
	defer prog.end()
	if len(ids) <= viewCheckScanMax {
		err := store.ScanViewRows(ctx, s.Within(r), pol.Digest, func(row store.ViewRow) error {
			if !members {
				row.Member = nil
			}
			add(row)
			return nil
		})
		return sum, err
	}
	if each == nil && viewCheckWorkers > 1 && len(ids) > viewCheckBatch {
		return s.rowsInParallel(ctx, r, pol, members, ids, prog)
	}
	var next int
	take := func() (int, int, bool) {
		lo := next
		next += viewCheckBatch
		return lo, min(lo+viewCheckBatch, len(ids)), lo < len(ids)
	}
	err := rowsAt(ctx, r, pol, members, ids, take, viewCheckMapped, add)
	return sum, err
}

// viewCheckWorkers is how many goroutines make a view check's rows by
// point reads, each in a read transaction of its own on the same
// snapshot. The reads are page faults and decoding, a citation at a
// time, which spread over the cores (at a million citations they were
// three fifths of a whole check's CPU, on one core). A variable so that
// tests run one and several.
var viewCheckWorkers = min(runtime.GOMAXPROCS(0), 4)

// rowsAt makes the rows of the citations with ids, a batch ids[lo:hi] at
// a time as take hands them out (at most viewCheckBatch each), with r:
// one Reader emptied each batch (its caches dropped) and given the window
// of the batch's term ids (Reader.SetWindow), the nodes outside it read
// by point lookups, the mapped pages of the file kept under mapped.
// The check of a view and a rebuild make their rows so.
func rowsAt(ctx context.Context, r *graph.Reader, pol store.PolicyRef, members bool, ids []graph.ID, take func() (lo, hi int, ok bool), mapped int64, add func(store.ViewRow)) error {
	// The citations' nodes were minted in order: their quads come in
	// subject order, a read each.
	r.InOrder()
	rd := NewReader(ctx, r)
	for {
		lo, hi, ok := take()
		if !ok {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rd.reset()
		// The walks of a window map pages of every OSP run: at thirty
		// million citations the first window (the classes' ids, each
		// skipped after windowNodeLinks links with a seek in 244 runs)
		// left 1.49 GB of the file mapped when the limit was looked at
		// only between citations.
		if err := rd.SetWindow(ids[lo], windowEnd(ids, lo, hi, r.MaxID()), func() { r.LimitMapped(mapped) }); err != nil {
			return err
		}
		for j, id := range ids[lo:hi] {
			if j%viewCheckEvery == 0 {
				r.LimitMapped(mapped)
			}
			// Through the Reader, which notes the IRI's id: reading the
			// node by its IRI then looks it up again otherwise (a seek in
			// the hash index and a read of the term, per citation).
			t, err := rd.term(id)
			if err != nil {
				return err
			}
			row, ok, err := readRow(rd, t.Value, pol, members)
			if err != nil {
				return err
			}
			if ok {
				add(row)
			}
		}
	}
}

// viewCheckWindow bounds the window of term ids (Reader.SetWindow) read
// for a batch of citations: from the batch's first citation to the next
// batch's, which in a database ingested in one go holds the batch's
// nodes. Citations far apart in ids (ingested among many other nodes)
// would make a large window; past this many ids their nodes are read by
// point lookups instead. A variable so that tests run windows cut short.
var viewCheckWindow graph.ID = 1 << 20

// windowEnd is the end (exclusive) of the window of term ids read for
// the batch ids[lo:hi]: the next batch's first citation, but no further
// than the batch's last citation's nodes are likely to reach (twice the
// median distance between two of its citations past it), nor than
// viewCheckWindow from its first. Without the second bound the last
// batch's window ran to the end of the dictionary: in a file
// renormalized under a second policy, a million ids of normalizations
// that no citation of the batch reads, whose decoding took the check of
// a ten-million-citation file from 0.93 to 1.24 GB of peak RSS.
func windowEnd(ids []graph.ID, lo, hi int, maxID graph.ID) graph.ID {
	end := maxID + 1
	if hi < len(ids) {
		end = ids[hi]
	}
	if hi-lo > 1 {
		gaps := make([]graph.ID, 0, hi-lo-1)
		for i := lo + 1; i < hi; i++ {
			gaps = append(gaps, ids[i]-ids[i-1])
		}
		slices.Sort(gaps)
		end = min(end, ids[hi-1]+2*gaps[len(gaps)/2]+1)
	} else {
		end = min(end, ids[lo]+windowSingle)
	}
	return min(end, ids[lo]+viewCheckWindow)
}

// windowSingle is the window of a batch of one citation: a few times the
// nodes one citation mints (some twenty).
const windowSingle = 64

// beforeTake and afterTake, when set (tests), are called by each worker
// of rowsInParallel (0 is r's) before and after it takes a batch; ok is
// false when none was left.
var (
	beforeTake func(worker int)
	afterTake  func(worker int, ok bool)
)

// rowsInParallel is citationRows' point reads on viewCheckWorkers
// goroutines: r's, and others each in a read transaction of its own,
// taking batches of ids in turn. A rowSum does not depend on the order
// of its rows, so each worker sums its own and the sums are added. A
// transaction that does not see r's snapshot (a write committed in
// between, in this process) takes no batch: r's reads are the check.
// The mapped limit is the process's, which every worker looks at.
func (s *Store) rowsInParallel(ctx context.Context, r *graph.Reader, pol store.PolicyRef, members bool, ids []graph.ID, prog *partProgress) (rowSum, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	take := func() (int, int, bool) {
		lo := int(next.Add(1)-1) * viewCheckBatch
		return lo, min(lo+viewCheckBatch, len(ids)), lo < len(ids)
	}
	var mu sync.Mutex
	var total rowSum
	work := func(w int, r *graph.Reader) error {
		take := take
		if beforeTake != nil && afterTake != nil {
			inner := take
			take = func() (int, int, bool) {
				beforeTake(w)
				lo, hi, ok := inner()
				afterTake(w, ok)
				return lo, hi, ok
			}
		}
		var sum rowSum
		err := rowsAt(ctx, r, pol, members, ids, take, viewCheckMapped, func(row store.ViewRow) {
			sum.addRow(row)
			prog.add(1)
		})
		if err != nil {
			cancel()
			return err
		}
		mu.Lock()
		total.merge(sum)
		mu.Unlock()
		return nil
	}
	snap := r.Snapshot()
	errs := make([]error, viewCheckWorkers)
	var wg sync.WaitGroup
	for w := 1; w < viewCheckWorkers; w++ {
		wg.Go(func() {
			errs[w] = s.g.Read(func(r2 *graph.Reader) error {
				if r2.Snapshot() != snap {
					return nil
				}
				return work(w, r2)
			})
		})
	}
	errs[0] = work(0, r)
	wg.Wait()
	// The first error that is not the cancellation another worker's
	// error caused.
	var first error
	for _, err := range errs {
		if err != nil && (first == nil || errors.Is(first, context.Canceled)) {
			first = err
		}
	}
	return total, first
}

// checkCitationRows makes every citation's row from the quads and looks
// it up in the view's rows: a row missing or different is a difference.
// It returns how many of the citations' rows the view holds (equal or
// not). It runs when the rows' sums differ: a point lookup a citation.
func (s *Store) checkCitationRows(ctx context.Context, r *graph.Reader, pol store.PolicyRef, members bool, rows viewMap, diff func(string, ...any)) (int64, error) {
	var matched int64
	_, err := s.citationRows(ctx, r, pol, members, func(row store.ViewRow) {
		k := rowKey(row.Key, row.CitationID)
		got := rowsGet(rows, k)
		switch {
		case got == nil:
			diff("the view lacks the row of %s, which the quads give (first difference)", describeRowKey(k))
		case !bytes.Equal(got, encodeRow(row)):
			matched++
			diff("the row of %s differs from what the quads give (first difference)", describeRowKey(k))
		default:
			matched++
		}
	})
	return matched, err
}

func rowsGet(rows viewMap, k []byte) []byte {
	if rows == nil {
		return nil
	}
	return rows.Get(k)
}

// findStrayRow names the first row of the view, in key order, that no
// citation's quads give: there is one when the view holds more rows than
// the citations' rows found in it. It reads the citation of each row by
// its id, so it runs only then.
func (s *Store) findStrayRow(ctx context.Context, r *graph.Reader, pol store.PolicyRef, rows viewMap, diff func(string, ...any)) error {
	rd := NewReader(ctx, r)
	n := 0
	return rows.Ascend(nil, func(k, _ []byte) (bool, error) {
		if n++; n%viewCheckBatch == 0 {
			if err := ctx.Err(); err != nil {
				return false, err
			}
			rd = NewReader(ctx, r)
			r.LimitMapped(viewCheckMapped)
		}
		_, id, ok := splitRowKey(k)
		if !ok {
			diff("the view holds a row %q that names no citation", k)
			return false, nil
		}
		node, err := rd.citationNode(id)
		if err != nil {
			return false, err
		}
		if node != "" {
			row, ok, err := readRow(rd, node, pol, false)
			if err != nil {
				return false, err
			}
			if ok && bytes.Equal(rowKey(row.Key, row.CitationID), k) {
				return true, nil
			}
		}
		diff("the view holds a row of %s that the quads do not give (first difference)", describeRowKey(k))
		return false, nil
	})
}

// findStrayPosting names the first entry of the posting bucket sub that
// the rows of its key do not give: there is one when the bucket holds
// more entries than the rows give. Each entry's key is read from the
// entry (after its value) and its rows from the view, so it runs only
// then.
func findStrayPosting(pb, rows viewMap, sub string, keyOf keyOfFunc) (string, error) {
	stray := ""
	err := pb.Ascend(nil, func(k, _ []byte) (bool, error) {
		key, ok := postingKey(sub, k)
		if ok && rows != nil {
			var given []posting
			err := rows.Prefix(append([]byte(key), 0), func(rk, rv []byte) (bool, error) {
				row, err := decodeRow(rk, rv)
				if err == nil {
					given = postingsOf(given, row, keyOf)
				}
				return true, nil
			})
			if err != nil {
				return false, err
			}
			if slices.Contains(given, posting{sub, string(k)}) {
				return true, nil
			}
		}
		stray = fmt.Sprintf("%q", k)
		return false, nil
	})
	return stray, err
}

// postingKey returns the key of the posting entry k of bucket sub: what
// follows its value (postingsOf).
func postingKey(sub string, k []byte) (string, bool) {
	switch sub {
	case subID:
		n := len(GroupID(""))
		if len(k) < n {
			return "", false
		}
		return string(k[n:]), true
	case subSim:
		if len(k) < 3 {
			return "", false
		}
		return string(k[3:]), true
	}
	_, rest, err := readStr(k)
	if err != nil {
		return "", false
	}
	return string(rest), true
}

// describeRowKey names the citation of a row key, and its key.
func describeRowKey(k []byte) string {
	key, id, _ := splitRowKey(k)
	if key == "" {
		return "citation " + id + " (no key)"
	}
	return fmt.Sprintf("key %s, citation %s", key, id)
}

func countOf(c []byte) any {
	if len(c) != 8 {
		return "nothing readable"
	}
	return binary.BigEndian.Uint64(c)
}

// engineSame reports whether this build's normalization engine makes
// the policy's keys as stored (grouping's Snapshot.EngineChanged is the
// opposite): only then are the targets of redirect and relation postings
// this build's to check.
func engineSame(pol store.PolicyRef) bool {
	p, err := normalize.ParsePolicy([]byte(pol.Text), "database:"+pol.String())
	if err != nil {
		return false
	}
	return p.Digest() == pol.Digest
}

// partProgress counts the units of a part of a check, from one goroutine
// or several, and reports them (graph.ReportProgress). A nil
// *partProgress, made when the context has no progress function, counts
// nothing.
type partProgress struct {
	ctx  context.Context
	p    graph.Progress
	done atomic.Int64
	// mu orders the reports of several goroutines, and reported is the
	// last count reported: two that pass a report's mark at once would
	// otherwise report out of order, the count going back.
	mu       sync.Mutex
	reported int64
}

// startProgress reports the start of a part that reads total units.
func startProgress(ctx context.Context, part, unit string, total int64) *partProgress {
	if !graph.HasProgress(ctx) {
		return nil
	}
	pp := &partProgress{ctx: ctx, p: graph.Progress{Part: part, Unit: unit, Total: total}}
	graph.ReportProgress(ctx, pp.p)
	return pp
}

// progressEvery is how many units a part reads between two reports. A
// variable so that tests see the reports between a part's first and last.
var progressEvery int64 = 1 << 16

func (pp *partProgress) add(n int64) {
	if pp == nil {
		return
	}
	if d := pp.done.Add(n); d/progressEvery != (d-n)/progressEvery {
		pp.report(d)
	}
}

// report reports d units done, unless a larger count was reported.
func (pp *partProgress) report(d int64) {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if d < pp.reported {
		return
	}
	pp.reported = d
	p := pp.p
	p.Done = d
	graph.ReportProgress(pp.ctx, p)
}

// end reports how far the part got.
func (pp *partProgress) end() {
	if pp == nil {
		return
	}
	pp.report(pp.done.Load())
}

// storedCount is a stored row count, 0 (not known) when it does not
// decode.
func storedCount(c []byte) int64 {
	if len(c) != 8 {
		return 0
	}
	return int64(binary.BigEndian.Uint64(c))
}
