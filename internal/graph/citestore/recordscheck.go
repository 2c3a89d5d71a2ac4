package citestore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// RecordsCheck is what check found of one set of group records (a
// records-N bucket of a view).
type RecordsCheck struct {
	RecordsID
	Name string // the policy as check names it: NAME@VERSION, or the digest
	// Skipped says why the records were not checked at all (incomplete:
	// they are not used), "" when they were.
	Skipped string
	Groups  int // records held
	Dirty   int // keys changed since the records were made current
	// Compared says the records equal a fresh build; else NotCompared
	// says why they were checked structurally only.
	Compared    bool
	NotCompared string
	Problems    []string
}

// FreshRecords makes the records a build of the policy with digest d
// under maxShared would write now, passing each to put as it is made
// (query.BuildRecords through a query.RecordFunc), for check to compare
// the kept ones with; an error put returns ends the build with it. With
// bounded, the build must keep to memory that does not grow with the
// database (query.BuildRecordsFromView: the grouping view read a batch
// at a time), and returns ErrFreshUnbounded, having put nothing, when it
// cannot; without, it may group every citation in memory. citestore does
// not import query: service passes it.
type FreshRecords func(ctx context.Context, d string, maxShared int, bounded bool, put func(*store.GroupRecord) error) error

// ErrFreshUnbounded is a bounded FreshRecords' error when only a whole
// grouping in memory could make the records.
var ErrFreshUnbounded = errors.New("citestore: a fresh build of the group records needs a whole grouping in memory")

// recordsCheckMapped is how much of the file the passes over group
// records keep mapped, about: their reads walk the records' buckets in
// order and seldom come back to a page, and at ten million citations the
// view check's bound (viewCheckMapped) let them reach 906 MB of peak RSS
// between two looks at the mapped pages.
const recordsCheckMapped = viewCheckMapped / 2

// recordsCheckProblems is how many problems check names per set of
// records: past the first few, more lines say nothing new (the remedy is
// one build).
const recordsCheckProblems = 10

// CheckAll is Check with the group records compared with a fresh build
// (fresh; nil to check them structurally only): graph.Store.Check, then
// every grouping view against the quads (CheckViews), then every set of
// group records (CheckRecords). It returns what it found of each set of
// records, for the caller to say; the problems of the views and records
// are in the error, which wraps graph.ErrCorrupt.
func (s *Store) CheckAll(ctx context.Context, fresh FreshRecords) ([]RecordsCheck, error) {
	if err := s.g.Check(ctx); err != nil {
		return nil, err
	}
	// The file's check kept a byte per term and the hash index's filters
	// (some 420 MB at 30M citations), now garbage: returned to the
	// system before the view check maps up to viewCheckMapped of the
	// file, they would otherwise add to its resident memory (1.29 GB at
	// the start of the view check at 30M).
	debug.FreeOSMemory()
	problems, err := s.viewProblems(ctx)
	if err != nil {
		return nil, err
	}
	checks, err := s.CheckRecords(ctx, fresh)
	if err != nil {
		return checks, err
	}
	for _, c := range checks {
		problems = append(problems, c.Problems...)
	}
	return checks, s.corrupt(problems)
}

// CheckRecords verifies every complete set of group records, each in one
// ordered pass over its buckets whose memory does not grow with the
// database (the counts by verdict, one per verdict provgraph gives):
//   - each record decodes, with a verdict provgraph gives, its smallest
//     key among its keys;
//   - each key of each record has its key -> id entry naming the record,
//     and key/ holds no other entry (counted; when it holds more than
//     the records' keys, a second pass names the first entry whose
//     group lacks its key);
//   - each queued record is in queue/ under its smallest key (the queue's
//     order), and each queue entry names a record that is queued and
//     whose smallest key it is under;
//   - counts/ equals the counts of the records by verdict, and "groups".
//
// Records with dirty keys (a run stopped before its end) are behind,
// which is not damage: that is said (Dirty), and they are not compared.
// Otherwise, when they are structurally sound and fresh is set, they are
// compared with a fresh build, and the first difference found is a
// problem. Past viewCheckScanMax citations the build must read the
// grouping view a batch at a time (bounded), as provgraph queue --build
// does: a whole grouping is the memory check keeps from; when the view
// cannot be read so, the records are checked structurally only
// (NotCompared says so). So are they when this build's normalization
// engine is not the one the policy's keys were made with (engineSame), as
// the view check skips the postings of targets then.
// Records of an incomplete view, and records without their marker, are
// not used and not checked.
func (s *Store) CheckRecords(ctx context.Context, fresh FreshRecords) ([]RecordsCheck, error) {
	infos, err := s.Views(ctx)
	if err != nil {
		return nil, err
	}
	kept, err := s.RecordsKept(ctx)
	if err != nil {
		return nil, err
	}
	if len(kept) == 0 {
		return nil, nil
	}
	var checks []RecordsCheck
	citations := -1
	for _, id := range kept {
		c := RecordsCheck{RecordsID: id, Name: id.Policy}
		i := slices.IndexFunc(infos, func(v store.ViewInfo) bool { return v.Policy.Digest == id.Policy })
		if i >= 0 && infos[i].Policy.Node != "" {
			c.Name = infos[i].Policy.String()
		}
		graph.ReportProgress(ctx, graph.Progress{Part: fmt.Sprintf("group records of policy %s, --max-shared %d", c.Name, id.MaxShared)})
		if i < 0 || !infos[i].Complete {
			c.Skipped = "the view is incomplete (an interrupted rebuild): not used and not checked"
			checks = append(checks, c)
			continue
		}
		complete := false
		err := s.within(func(r *graph.Reader) error {
			rb, err := r.View(id.Policy).Sub(recordsName(id.MaxShared), false)
			if err != nil || rb == nil {
				return err
			}
			if rb.Get([]byte(recComplete)) == nil {
				return nil
			}
			complete = true
			if citations < 0 {
				if citations, err = citationCount(ctx, r, viewCheckScanMax); err != nil {
					return err
				}
			}
			return s.checkRecordsSet(ctx, r, rb, &c)
		})
		if err != nil {
			return checks, err
		}
		if !complete {
			c.Skipped = "incomplete (a build or refresh that stopped): not used and not checked; the next run that writes drops them"
			checks = append(checks, c)
			continue
		}
		switch {
		case len(c.Problems) > 0:
		case c.Dirty > 0:
			c.NotCompared = "behind the changed keys, so not compared with a fresh build"
		case fresh == nil:
			c.NotCompared = "no fresh build to compare with"
		case !engineSame(infos[i].Policy):
			// As the view check skips the postings of targets: a build
			// now normalizes targets with another engine than the one
			// the keys were made with, and may differ without damage.
			c.NotCompared = "this provgraph's normalization engine differs from the one the policy's keys were made with, so a fresh build may group targets otherwise"
		default:
			if err := s.compareRecords(ctx, fresh, &c, citations > viewCheckScanMax); err != nil {
				return checks, err
			}
		}
		checks = append(checks, c)
	}
	return checks, nil
}

// citationCount counts the citations, as the view check finds them, up
// to more than atMost (it stops there: check needs to know only whether
// the database is past viewCheckScanMax). The walk of every citation's
// type maps the pages of POS's runs, and at ten million citations it left
// 1 GB of the file mapped, check's peak, in a fifth of a second: it keeps
// them under a quarter of viewCheckMapped as the view check's walk does.
func citationCount(ctx context.Context, r *graph.Reader, atMost int) (int, error) {
	typ, cls := r.ID(iri(vocab.RDFType)), r.ID(citationClass)
	n := 0
	if typ == 0 || cls == 0 {
		return 0, nil
	}
	walk, stop := context.WithCancel(ctx)
	defer stop()
	err := r.Subjects(walk, typ, cls, func(graph.ID) {
		if n++; n%viewCheckBatch == 0 {
			r.LimitMapped(viewCheckMapped / 4)
		}
		if n > atMost {
			stop()
		}
	})
	if err != nil && n > atMost && ctx.Err() == nil && errors.Is(err, context.Canceled) {
		err = nil
	}
	return n, err
}

// recordsProblem adds a problem to c, naming the policy and --max-shared
// and saying how to rebuild the records.
func (s *Store) recordsProblem(c *RecordsCheck, format string, args ...any) {
	if len(c.Problems) >= recordsCheckProblems {
		return
	}
	c.Problems = append(c.Problems, fmt.Sprintf("group records of policy %s, --max-shared %d: %s (rebuild them: provgraph queue --build --db %s --policy %s --max-shared %d)",
		c.Name, c.MaxShared, fmt.Sprintf(format, args...), s.g.Path(), c.Policy, c.MaxShared))
}

// knownVerdict says whether v is a verdict provgraph gives a group.
func knownVerdict(v string) bool {
	return slices.ContainsFunc(model.Verdicts, func(m model.Verdict) bool { return m.Name == v })
}

// checkRecordsSet is the structural check of the records bucket rb
// (CheckRecords).
func (s *Store) checkRecordsSet(ctx context.Context, r *graph.Reader, rb *graph.Bucket, c *RecordsCheck) error {
	subs := map[string]*graph.Bucket{}
	for _, name := range recordSubs {
		b, err := rb.Sub(name, false)
		if err != nil {
			return err
		}
		subs[name] = b
	}
	ascend := func(name string, fn func(k, v []byte) (bool, error)) error {
		b := subs[name]
		if b == nil {
			return nil
		}
		n := 0
		return b.Ascend(nil, func(k, v []byte) (bool, error) {
			if n++; n%viewCheckBatch == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
				r.LimitMapped(recordsCheckMapped)
			}
			return fn(k, v)
		})
	}
	get := func(name string, k []byte) []byte {
		if b := subs[name]; b != nil {
			return b.Get(k)
		}
		return nil
	}
	problem := func(format string, args ...any) { s.recordsProblem(c, format, args...) }

	if err := ascend(recDirty, func(_, _ []byte) (bool, error) { c.Dirty++; return true, nil }); err != nil {
		return err
	}

	// The records, each with its key entries and queue entry.
	counts := map[string]int64{"groups": 0}
	keysOfRecords, keyProblems := 0, 0
	err := ascend(recID, func(k, v []byte) (bool, error) {
		id := string(k)
		c.Groups++
		counts["groups"]++
		rec, bad := decodeRecordBare(id, v)
		if bad != "" {
			problem("the record of group %s does not decode: %s", id, bad)
			return true, nil
		}
		if knownVerdict(rec.Verdict) {
			counts["verdict:"+rec.Verdict]++
		} else {
			problem("group %s: its verdict %q is none provgraph gives", id, rec.Verdict)
		}
		if !slices.Contains(rec.Keys, rec.Key) {
			problem("group %s: its smallest key %s is not among its keys", id, rec.Key)
		}
		for _, key := range rec.Keys {
			if key == "" {
				continue
			}
			keysOfRecords++
			switch got := get(recKey, []byte(key)); {
			case got == nil:
				keyProblems++
				problem("group %s: its key %s has no key -> id entry", id, key)
			case string(got) != id:
				keyProblems++
				problem("group %s: its key %s has a key -> id entry naming group %s", id, key, got)
			}
		}
		if rec.Queued && get(recQueue, queueKey(rec)) == nil {
			problem("group %s is queued, but the queue lacks it (under its smallest key %s)", id, rec.Key)
		}
		return true, nil
	})
	if err != nil {
		return err
	}

	// The key entries: each names a record; as many as the records' keys.
	keyEntries := 0
	err = ascend(recKey, func(k, v []byte) (bool, error) {
		keyEntries++
		if get(recID, v) == nil {
			problem("the key -> id entry of key %s names group %s, which has no record", k, v)
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	switch {
	case keyEntries > keysOfRecords:
		// More entries than keys: name the first whose group lacks its
		// key.
		stray := false
		err = ascend(recKey, func(k, v []byte) (bool, error) {
			rv := get(recID, v)
			if rv == nil {
				return true, nil // said above
			}
			rec, bad := decodeRecordBare(string(v), rv)
			if bad != "" || slices.Contains(rec.Keys, string(k)) {
				return true, nil
			}
			problem("the key -> id entry of key %s names group %s, whose keys do not include it", k, v)
			stray = true
			return false, nil
		})
		if err != nil {
			return err
		}
		if !stray {
			problem("key/ holds %d key -> id entries, the records have %d keys", keyEntries, keysOfRecords)
		}
	case keyEntries < keysOfRecords && keyProblems == 0:
		// Every key has its entry, and a key of two records would name
		// one of them only (a problem above): a record gives a key twice.
		problem("key/ holds %d key -> id entries, the records have %d keys: a record gives a key twice", keyEntries, keysOfRecords)
	}

	// The queue: each entry a queued record, under its smallest key.
	err = ascend(recQueue, func(k, _ []byte) (bool, error) {
		key, id, ok := splitRowKey(k)
		if !ok {
			problem("the queue entry %q names no group", k)
			return true, nil
		}
		rv := get(recID, []byte(id))
		if rv == nil {
			problem("the queue holds group %s (under key %s), which has no record", id, key)
			return true, nil
		}
		rec, bad := decodeRecordBare(id, rv)
		switch {
		case bad != "":
			// said with the records
		case !rec.Queued:
			problem("the queue holds group %s, whose record is not queued", id)
		case rec.Key != key:
			problem("the queue holds group %s under key %s, out of its order: its smallest key is %s", id, key, rec.Key)
		}
		return true, nil
	})
	if err != nil {
		return err
	}

	// The counts.
	err = ascend(recCounts, func(k, v []byte) (bool, error) {
		name := string(k)
		if len(v) != 8 {
			problem("the count %s is unreadable (%d bytes, want 8)", name, len(v))
			return true, nil
		}
		if n := int64(binary.BigEndian.Uint64(v)); n != counts[name] {
			problem("the count %s says %d, the records give %d", name, n, counts[name])
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(counts)) {
		if n := counts[name]; n > 0 && get(recCounts, []byte(name)) == nil {
			problem("the count %s is missing, the records give %d", name, n)
		}
	}
	return nil
}

// compareRecords compares the records of c, structurally sound (c.Groups
// of them), with a fresh build (bounded: in memory that does not grow with
// the database), and adds the first difference it finds as a problem.
// The fresh records come in the build's order, a batch of
// compareBatch at a time, each batch looked up among the kept ones in
// id order in one read transaction; each fresh group's id is noted (8
// bytes), so that, when every fresh record has its equal and the records
// hold more, one pass over the kept ones names a group the build does
// not have.
func (s *Store) compareRecords(ctx context.Context, fresh FreshRecords, c *RecordsCheck, bounded bool) error {
	var (
		batch   []*store.GroupRecord
		seen    freshIDs
		matched int
		differs = errors.New("the first difference") // ends the build
	)
	lookup := func() error {
		slices.SortFunc(batch, func(a, b *store.GroupRecord) int { return strings.Compare(a.ID, b.ID) })
		err := s.within(func(r *graph.Reader) error {
			ids, err := keptRecordIDs(r, c)
			if err != nil {
				return err
			}
			for _, want := range batch {
				v := ids.Get([]byte(want.ID))
				if v == nil {
					s.recordsProblem(c, "a fresh build has group %s (key %s), which has no record (first difference)", want.ID, want.Key)
					return differs
				}
				rec, bad := decodeRecordBare(want.ID, v)
				if bad != "" {
					return fmt.Errorf("%w: group record %s: %s (run provgraph queue --build)", graph.ErrCorrupt, want.ID, bad)
				}
				if d := recordDiff(rec, want); d != "" {
					s.recordsProblem(c, "group %s: %s (first difference)", want.ID, d)
					return differs
				}
				matched++
			}
			r.LimitMapped(recordsCheckMapped)
			return nil
		})
		batch = batch[:0]
		return err
	}
	// The pages the check's earlier parts left mapped (667 MB of the
	// view's at ten million citations) are dropped first: the build maps
	// its own on top of them.
	if err := s.within(func(r *graph.Reader) error {
		r.ReleaseMapped(0)
		return nil
	}); err != nil {
		return err
	}
	var mu sync.Mutex // a build may put from several goroutines
	err := fresh(ctx, c.Policy, c.MaxShared, bounded, func(rec *store.GroupRecord) error {
		mu.Lock()
		defer mu.Unlock()
		seen.add(rec.ID)
		if batch = append(batch, rec); len(batch) < compareBatch {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return lookup()
	})
	if err == nil && len(batch) > 0 {
		err = lookup()
	}
	switch {
	case errors.Is(err, differs):
		return nil
	case errors.Is(err, ErrFreshUnbounded):
		c.NotCompared = fmt.Sprintf("the database holds more than %d citations, and its grouping view cannot be read a batch at a time for a fresh build (a whole grouping, whose memory check keeps to that bound)", viewCheckScanMax)
		return nil
	case err != nil:
		if ctx.Err() != nil || errors.Is(err, graph.ErrCorrupt) {
			return err
		}
		c.NotCompared = "a fresh build to compare with failed: " + err.Error()
		return nil
	case matched == c.Groups:
		c.Compared = true
		return nil
	}
	// Every fresh record has its equal, and the records hold more: name
	// the first, in id order, whose group the build does not have.
	seen.sort()
	found := false
	err = s.within(func(r *graph.Reader) error {
		ids, err := keptRecordIDs(r, c)
		if err != nil {
			return err
		}
		n := 0
		return ids.Ascend(nil, func(k, v []byte) (bool, error) {
			if n++; n%viewCheckBatch == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
				r.LimitMapped(recordsCheckMapped)
			}
			if seen.has(string(k)) {
				return true, nil
			}
			rec, bad := decodeRecordBare(string(k), v)
			if bad != "" {
				return false, fmt.Errorf("%w: group record %s: %s (run provgraph queue --build)", graph.ErrCorrupt, k, bad)
			}
			s.recordsProblem(c, "group %s (key %s) has a record, but a fresh build has no group with this id (first difference)", rec.ID, rec.Key)
			found = true
			return false, nil
		})
	})
	if err != nil {
		return err
	}
	if !found {
		s.recordsProblem(c, "the records hold %d groups, a fresh build gives %d", c.Groups, matched)
	}
	return nil
}

// compareBatch is how many fresh records compareRecords looks up in one
// read transaction. A variable so that tests cut batches.
var compareBatch = 4096

// keptRecordIDs returns the id -> record bucket of c's records in r.
func keptRecordIDs(r *graph.Reader, c *RecordsCheck) (*graph.Bucket, error) {
	rb, err := r.View(c.Policy).Sub(recordsName(c.MaxShared), false)
	if err != nil {
		return nil, err
	}
	if rb == nil {
		return nil, fmt.Errorf("%w: group records of policy %s, --max-shared %d: gone during check", graph.ErrCorrupt, c.Name, c.MaxShared)
	}
	ids, err := rb.Sub(recID, false)
	if err != nil {
		return nil, err
	}
	if ids == nil {
		return nil, fmt.Errorf("%w: group records of policy %s, --max-shared %d: no id -> record bucket", graph.ErrCorrupt, c.Name, c.MaxShared)
	}
	return ids, nil
}

// freshIDs are the ids of the groups a fresh build gave: a group id
// ("g-" and 12 hexadecimal digits, query.groupID) as its 48 bits, any
// other as an FNV-1a hash with the top bit set (which no 48-bit value
// has), so that 8 bytes a group hold them all.
type freshIDs struct{ v []uint64 }

func freshID(id string) uint64 {
	if len(id) == 14 && strings.HasPrefix(id, "g-") {
		if n, err := strconv.ParseUint(id[2:], 16, 64); err == nil {
			return n
		}
	}
	h := fnv.New64a()
	h.Write([]byte(id))
	return h.Sum64() | 1<<63
}

func (f *freshIDs) add(id string)      { f.v = append(f.v, freshID(id)) }
func (f *freshIDs) sort()              { slices.Sort(f.v) }
func (f *freshIDs) has(id string) bool { _, ok := slices.BinarySearch(f.v, freshID(id)); return ok }

// recordDiff names the first field of the kept record rec that differs
// from the fresh build's want, "" when none does.
func recordDiff(rec, want *store.GroupRecord) string {
	diff := func(field string, got, want any) string {
		return fmt.Sprintf("its record has %s %v, a fresh build gives %v", field, got, want)
	}
	switch {
	case rec.Key != want.Key:
		return diff("the smallest key", rec.Key, want.Key)
	case !slices.Equal(rec.Keys, want.Keys):
		return diff("the keys", strings.Join(rec.Keys, " "), strings.Join(want.Keys, " "))
	case rec.Members != want.Members:
		return diff("members", rec.Members, want.Members)
	case rec.Verdict != want.Verdict:
		return diff("the verdict", rec.Verdict, want.Verdict)
	case rec.Queued != want.Queued:
		return diff("queued", rec.Queued, want.Queued)
	case rec.ReviewRelation != want.ReviewRelation:
		return diff("a relation that needs review", rec.ReviewRelation, want.ReviewRelation)
	}
	return ""
}
