package citestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
)

// Group records (store.GroupRecord) of one policy under one --max-shared
// are kept in the policy's view bucket, in the nested bucket
// "records-N" (N the --max-shared, model.DefaultMaxShared for 0):
//
//	complete   the marker: present once the records equal BuildRecords'
//	           ("build TIME" or "refresh TIME")
//	id/        group id -> the record (encodeRecord)
//	key/       key -> group id, for every key of a record's Keys
//	queue/     Key 0x00 id -> "", for the queued records
//	counts/    "groups", "verdict:V" -> uint64, of every record
//	dirty/     key -> "": keys whose view rows a write changed since the
//	           records were last made current
//
// Records is a query.RecordStore: Put and Delete keep key/, queue/ and
// counts/ in their transaction. Every write of view rows (WriteViewRows,
// WriteNewViewRows, WritePolicyViewRows) adds its keys to dirty/ of each
// complete records bucket, in the transaction of its quads;
// service.KeepRecords then refreshes the records from them
// (query.RefreshRecords), or drops the records when they are too many.
// citestore does not import query: what makes records is query's, called
// by service. A view
// rebuild drops the view bucket, records and all. check verifies the
// records (CheckRecords, recordscheck.go).
const (
	recordsPrefix = "records-"
	recComplete   = "complete"
	recID         = "id"
	recKey        = "key"
	recQueue      = "queue"
	recCounts     = "counts"
	recDirty      = "dirty"
)

var recordSubs = []string{recID, recKey, recQueue, recCounts, recDirty}

// ErrNoRecords is returned (wrapped) when the records of a policy and
// --max-shared are not kept, or not complete.
var ErrNoRecords = errors.New("no group records are kept for the policy and --max-shared")

// DefaultRecordsBatch is how many record writes (Put or Delete) a Records
// buffers before writing them in one transaction.
const DefaultRecordsBatch = 5000

func recordsName(maxShared int) string {
	if maxShared <= 0 {
		maxShared = model.DefaultMaxShared
	}
	return recordsPrefix + strconv.Itoa(maxShared)
}

// encodeRecord writes a record's value (its id is the bucket key): flags,
// members, verdict, then Key and the other keys of Keys, as str.
func encodeRecord(r *store.GroupRecord) []byte {
	var flags byte
	if r.ReviewRelation {
		flags |= 1
	}
	if r.Queued {
		flags |= 2
	}
	b := []byte{flags}
	b = binary.AppendUvarint(b, uint64(r.Members))
	b = appendStr(b, r.Verdict)
	b = appendStr(b, r.Key)
	b = binary.AppendUvarint(b, uint64(len(r.Keys)))
	for _, k := range r.Keys {
		b = appendStr(b, k)
	}
	return b
}

func decodeRecord(id string, v []byte) (*store.GroupRecord, error) {
	r, what := decodeRecordBare(id, v)
	if what != "" {
		return nil, fmt.Errorf("%w: group record %s: %s (run provgraph queue --build)", graph.ErrCorrupt, id, what)
	}
	return r, nil
}

// decodeRecordBare decodes a record, or says what in it is unreadable
// (check names the group and the records around it).
func decodeRecordBare(id string, v []byte) (*store.GroupRecord, string) {
	bad := func(what string) (*store.GroupRecord, string) { return nil, what }
	if len(v) < 1 {
		return bad("empty")
	}
	r := &store.GroupRecord{ID: id, ReviewRelation: v[0]&1 != 0, Queued: v[0]&2 != 0}
	v = v[1:]
	m, k := binary.Uvarint(v)
	if k <= 0 {
		return bad("member count unreadable")
	}
	r.Members, v = int(m), v[k:]
	var err error
	if r.Verdict, v, err = readStr(v); err != nil {
		return bad(err.Error())
	}
	if r.Key, v, err = readStr(v); err != nil {
		return bad(err.Error())
	}
	n, k := binary.Uvarint(v)
	if k <= 0 || n > uint64(len(v)) {
		return bad("key count unreadable")
	}
	v = v[k:]
	r.Keys = make([]string, 0, n)
	for range n {
		var s string
		if s, v, err = readStr(v); err != nil {
			return bad(err.Error())
		}
		r.Keys = append(r.Keys, s)
	}
	if len(v) != 0 {
		return bad("bytes after the keys")
	}
	return r, ""
}

func queueKey(r *store.GroupRecord) []byte { return rowKey(r.Key, r.ID) }

// RefreshMaxDirtyPercent and RefreshMinDirty bound the keys whose change
// records are refreshed with rather than dropped (service.KeepRecordsOf):
// at most RefreshMinDirty keys, or RefreshMaxDirtyPercent % of the
// records (a build is then the cheaper way: at a million citations a
// refresh costs about 2.3 ms a changed key, a build about 76 µs a
// citation, docs/SCALE.md).
const (
	RefreshMaxDirtyPercent = 10
	RefreshMinDirty        = 1000
)

// DirtyLimit is how many changed keys records of groups groups may be
// refreshed with.
func DirtyLimit(groups int) int {
	return max(RefreshMinDirty, groups*RefreshMaxDirtyPercent/100)
}

// recDirtyCount is the key of a records bucket that holds the number of
// entries of dirty/ (uint64), so that markDirty stops adding keys once
// the records are past refreshing without counting the bucket.
const recDirtyCount = "dirty-count"

// markDirty adds keys to dirty/ of every complete records bucket of the
// view bucket b, up to one past DirtyLimit of its records: past that the
// records are dropped, not refreshed (service.KeepRecordsOf), and further
// keys would only be random writes into a bucket about to go (an ingest
// of millions of citations into a database with records).
func markDirty(b *graph.Bucket, keys map[string]bool) error {
	if len(keys) == 0 {
		return nil
	}
	subs, err := b.Subs()
	if err != nil {
		return err
	}
	var sorted []string
	for _, name := range subs {
		if !strings.HasPrefix(name, recordsPrefix) {
			continue
		}
		rb, err := b.Sub(name, false)
		if err != nil {
			return err
		}
		if rb.Get([]byte(recComplete)) == nil {
			continue // dropped by service.KeepRecords, or being built
		}
		groups := 0
		if c, err := rb.Sub(recCounts, false); err != nil {
			return err
		} else if c != nil {
			if v := c.Get([]byte("groups")); len(v) == 8 {
				groups = int(binary.BigEndian.Uint64(v))
			}
		}
		limit := uint64(DirtyLimit(groups)) + 1
		var n uint64
		if v := rb.Get([]byte(recDirtyCount)); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		if n >= limit {
			continue // past refreshing: the records will be dropped
		}
		d, err := rb.Sub(recDirty, true)
		if err != nil {
			return err
		}
		if sorted == nil {
			for k := range keys {
				sorted = append(sorted, k)
			}
			slices.Sort(sorted)
		}
		for _, k := range sorted {
			if n >= limit {
				break
			}
			if d.Get([]byte(k)) == nil {
				if err := d.Put([]byte(k), nil); err != nil {
					return err
				}
				n++
			}
		}
		if err := rb.Put([]byte(recDirtyCount), binary.BigEndian.AppendUint64(nil, n)); err != nil {
			return err
		}
	}
	return nil
}

// Records is the query.RecordStore of one policy (by digest) and
// --max-shared, kept beside the policy's grouping view. Its writes are
// buffered, Batch at a time, and written in one transaction when the
// buffer is full, before any read, and by Flush: call Flush after the
// last write.
type Records struct {
	s         *Store
	d         string
	name      string
	MaxShared int
	Batch     int
	pending   []recOp
}

type recOp struct {
	put *store.GroupRecord
	del string
}

// Records returns the records of the policy with digest d under
// maxShared (0: model.DefaultMaxShared), present or not.
func (s *Store) Records(d string, maxShared int) *Records {
	return &Records{s: s, d: d, name: recordsName(maxShared), MaxShared: maxShared, Batch: DefaultRecordsBatch}
}

// read runs fn on the records bucket (nil when there is none) in a read
// transaction, after writing the buffered writes.
func (rs *Records) read(ctx context.Context, fn func(rb *graph.Bucket) error) error {
	if err := rs.Flush(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return rs.s.within(func(r *graph.Reader) error {
		b := r.View(rs.d)
		if b == nil {
			return fn(nil)
		}
		rb, err := b.Sub(rs.name, false)
		if err != nil {
			return err
		}
		return fn(rb)
	})
}

func sub(rb *graph.Bucket, name string) (*graph.Bucket, error) {
	if rb == nil {
		return nil, nil
	}
	return rb.Sub(name, false)
}

// State says whether the records exist, and whether they are complete
// (with the marker's text).
func (rs *Records) State(ctx context.Context) (exists, complete bool, marker string, err error) {
	err = rs.read(ctx, func(rb *graph.Bucket) error {
		if rb == nil {
			return nil
		}
		exists = true
		if m := rb.Get([]byte(recComplete)); m != nil {
			complete, marker = true, string(m)
		}
		return nil
	})
	return
}

// Record implements query.RecordStore.
func (rs *Records) Record(ctx context.Context, id string) (rec *store.GroupRecord, ok bool, err error) {
	err = rs.read(ctx, func(rb *graph.Bucket) error {
		b, err := sub(rb, recID)
		if err != nil || b == nil || id == "" {
			return err
		}
		if v := b.Get([]byte(id)); v != nil {
			rec, err = decodeRecord(id, v)
			ok = err == nil
		}
		return err
	})
	return
}

// IDOfKey implements query.RecordStore.
func (rs *Records) IDOfKey(ctx context.Context, key string) (id string, ok bool, err error) {
	err = rs.read(ctx, func(rb *graph.Bucket) error {
		b, err := sub(rb, recKey)
		if err != nil || b == nil || key == "" {
			return err
		}
		if v := b.Get([]byte(key)); v != nil {
			id, ok = string(v), true
		}
		return nil
	})
	return
}

// Put implements query.RecordStore.
func (rs *Records) Put(ctx context.Context, rec *store.GroupRecord) error {
	if rec.ID == "" {
		return errors.New("group records: a record has no id")
	}
	rs.pending = append(rs.pending, recOp{put: rec})
	return rs.flushFull(ctx)
}

// Delete implements query.RecordStore.
func (rs *Records) Delete(ctx context.Context, id string) error {
	if id == "" {
		return nil
	}
	rs.pending = append(rs.pending, recOp{del: id})
	return rs.flushFull(ctx)
}

func (rs *Records) flushFull(ctx context.Context) error {
	if len(rs.pending) < max(rs.Batch, 1) {
		return nil
	}
	return rs.Flush(ctx)
}

// Flush writes the buffered writes in one transaction.
func (rs *Records) Flush(ctx context.Context) error {
	if len(rs.pending) == 0 {
		return nil
	}
	return rs.update(ctx, nil)
}

// update writes the buffered writes, then calls then (if set) on the
// records bucket, in one write transaction; the records bucket is created
// when missing (without the marker).
func (rs *Records) update(ctx context.Context, then func(rb *graph.Bucket) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := rs.s.g.Update(func(w *graph.Writer) error {
		vb := w.View(rs.d)
		if vb == nil {
			return fmt.Errorf("policy %s: %w", rs.d, ErrNoRecords)
		}
		rb, err := vb.Sub(rs.name, true)
		if err != nil {
			return err
		}
		t, err := openRecTx(rb)
		if err != nil {
			return err
		}
		for _, op := range rs.pending {
			if op.put != nil {
				err = t.put(op.put)
			} else {
				err = t.delete(op.del)
			}
			if err != nil {
				return err
			}
		}
		if err := t.writeCounts(); err != nil {
			return err
		}
		if then != nil {
			return then(rb)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("group records of policy %s: %w", rs.d, err)
	}
	rs.pending = rs.pending[:0]
	return nil
}

// recTx is the records bucket in a write transaction, with the counts
// read once and written back by writeCounts.
type recTx struct {
	subs   map[string]*graph.Bucket
	counts map[string]int64
}

func openRecTx(rb *graph.Bucket) (*recTx, error) {
	t := &recTx{subs: map[string]*graph.Bucket{}, counts: map[string]int64{}}
	for _, s := range recordSubs {
		b, err := rb.Sub(s, true)
		if err != nil {
			return nil, err
		}
		t.subs[s] = b
	}
	err := t.subs[recCounts].Ascend(nil, func(k, v []byte) (bool, error) {
		if len(v) != 8 {
			return false, fmt.Errorf("%w: group records: count %q unreadable (run provgraph queue --build)", graph.ErrCorrupt, k)
		}
		t.counts[string(k)] = int64(binary.BigEndian.Uint64(v))
		return true, nil
	})
	return t, err
}

func (t *recTx) writeCounts() error {
	b := t.subs[recCounts]
	for k, n := range t.counts {
		var err error
		if n <= 0 {
			err = b.Delete([]byte(k))
		} else {
			err = b.Put([]byte(k), binary.BigEndian.AppendUint64(nil, uint64(n)))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// delete removes the record of id with its keys, queue entry and counts.
func (t *recTx) delete(id string) error {
	v := t.subs[recID].Get([]byte(id))
	if v == nil {
		return nil
	}
	old, err := decodeRecord(id, v)
	if err != nil {
		return err
	}
	for _, k := range old.Keys {
		if bytes.Equal(t.subs[recKey].Get([]byte(k)), []byte(id)) {
			if err := t.subs[recKey].Delete([]byte(k)); err != nil {
				return err
			}
		}
	}
	if old.Queued {
		if err := t.subs[recQueue].Delete(queueKey(old)); err != nil {
			return err
		}
	}
	t.counts["groups"]--
	t.counts["verdict:"+old.Verdict]--
	return t.subs[recID].Delete([]byte(id))
}

func (t *recTx) put(r *store.GroupRecord) error {
	if err := t.delete(r.ID); err != nil {
		return err
	}
	if err := t.subs[recID].Put([]byte(r.ID), encodeRecord(r)); err != nil {
		return err
	}
	for _, k := range r.Keys {
		if k == "" {
			continue
		}
		if err := t.subs[recKey].Put([]byte(k), []byte(r.ID)); err != nil {
			return err
		}
	}
	if r.Queued {
		if err := t.subs[recQueue].Put(queueKey(r), nil); err != nil {
			return err
		}
	}
	t.counts["groups"]++
	t.counts["verdict:"+r.Verdict]++
	return nil
}

// Queue implements query.RecordStore: a cursor range of queue/.
func (rs *Records) Queue(ctx context.Context, after string, limit int) ([]*store.GroupRecord, error) {
	out, _, err := rs.queue(ctx, after, limit, false)
	return out, err
}

// CompleteQueue is Queue of complete records: in the same read
// transaction, it first looks for the marker, and returns no record and
// complete false without it (records being built, refreshed or dropped by
// another transaction's write). A server that reads the queue while an
// ingest through it rebuilds the records tells its reader to come back.
func (rs *Records) CompleteQueue(ctx context.Context, after string, limit int) (recs []*store.GroupRecord, complete bool, err error) {
	return rs.queue(ctx, after, limit, true)
}

func (rs *Records) queue(ctx context.Context, after string, limit int, needComplete bool) ([]*store.GroupRecord, bool, error) {
	var out []*store.GroupRecord
	notQueued, complete := false, true
	err := rs.read(ctx, func(rb *graph.Bucket) error {
		if needComplete && (rb == nil || rb.Get([]byte(recComplete)) == nil) {
			complete = false
			return nil
		}
		q, err := sub(rb, recQueue)
		if err != nil {
			return err
		}
		ids, err := sub(rb, recID)
		if err != nil {
			return err
		}
		var from []byte
		if after != "" {
			var prev *store.GroupRecord
			if ids != nil {
				if v := ids.Get([]byte(after)); v != nil {
					if prev, err = decodeRecord(after, v); err != nil {
						return err
					}
				}
			}
			if prev == nil || !prev.Queued {
				notQueued = true
				return nil
			}
			from = append(queueKey(prev), 0) // the next key after it
		}
		if q == nil {
			return nil
		}
		return q.Ascend(from, func(k, _ []byte) (bool, error) {
			if limit > 0 && len(out) >= limit {
				return false, nil
			}
			_, id, ok := splitRowKey(k)
			if !ok {
				return false, fmt.Errorf("%w: group records: queue entry %q unreadable (run provgraph queue --build)", graph.ErrCorrupt, k)
			}
			v := ids.Get([]byte(id))
			if v == nil {
				return false, fmt.Errorf("%w: group records: queued group %s has no record (run provgraph queue --build)", graph.ErrCorrupt, id)
			}
			r, err := decodeRecord(id, v)
			if err != nil {
				return false, err
			}
			out = append(out, r)
			return true, nil
		})
	})
	if err == nil && notQueued {
		return nil, complete, fmt.Errorf("%w: no queued group has id %s", store.ErrNoGroup, after)
	}
	return out, complete, err
}

// Counts implements query.RecordStore.
func (rs *Records) Counts(ctx context.Context) (map[string]int, error) {
	c := map[string]int{"groups": 0}
	err := rs.read(ctx, func(rb *graph.Bucket) error {
		b, err := sub(rb, recCounts)
		if err != nil || b == nil {
			return err
		}
		return b.Ascend(nil, func(k, v []byte) (bool, error) {
			if len(v) != 8 {
				return false, fmt.Errorf("%w: group records: count %q unreadable (run provgraph queue --build)", graph.ErrCorrupt, k)
			}
			c[string(k)] = int(binary.BigEndian.Uint64(v))
			return true, nil
		})
	})
	return c, err
}

// DirtyKeys returns the keys whose view rows changed since the records
// were made current, in byte order, up to limit+1 (all for limit < 0).
func (rs *Records) DirtyKeys(ctx context.Context, limit int) ([]string, error) {
	var out []string
	err := rs.read(ctx, func(rb *graph.Bucket) error {
		b, err := sub(rb, recDirty)
		if err != nil || b == nil {
			return err
		}
		return b.Ascend(nil, func(k, _ []byte) (bool, error) {
			out = append(out, string(k))
			return limit < 0 || len(out) <= limit, nil
		})
	})
	return out, err
}

// Drop deletes the records.
func (rs *Records) Drop(ctx context.Context) error {
	rs.pending = nil
	if err := ctx.Err(); err != nil {
		return err
	}
	return rs.s.g.Update(func(w *graph.Writer) error {
		if vb := w.View(rs.d); vb != nil {
			return vb.DropSub(rs.name)
		}
		return nil
	})
}

// Begin drops the records and starts them again, empty and without the
// marker: a build writes them (Put), then Finish.
func (rs *Records) Begin(ctx context.Context) error {
	has, err := rs.s.HasView(ctx, rs.d)
	if err != nil {
		return err
	}
	if !has {
		return fmt.Errorf("group records: the database keeps no complete grouping view of policy %s (run provgraph view rebuild first)", rs.d)
	}
	if err := rs.Drop(ctx); err != nil {
		return err
	}
	return rs.update(ctx, nil)
}

// Unmark removes the marker, in a transaction of its own: what follows
// (a refresh written in several transactions) leaves records that are not
// used until Finish.
func (rs *Records) Unmark(ctx context.Context) error {
	return rs.update(ctx, func(rb *graph.Bucket) error { return rb.Delete([]byte(recComplete)) })
}

// Finish writes the buffered writes, clears the dirty keys and sets the
// marker ("how TIME", begun the time the build or refresh began), in one
// transaction, and returns the number of records.
func (rs *Records) Finish(ctx context.Context, how string, begun time.Time) (int, error) {
	n := 0
	err := rs.update(ctx, func(rb *graph.Bucket) error {
		if c, _ := rb.Sub(recCounts, false); c != nil {
			if v := c.Get([]byte("groups")); len(v) == 8 {
				n = int(binary.BigEndian.Uint64(v))
			}
		}
		if err := rb.DropSub(recDirty); err != nil {
			return err
		}
		if err := rb.Delete([]byte(recDirtyCount)); err != nil {
			return err
		}
		return rb.Put([]byte(recComplete), []byte(how+" "+begun.UTC().Format(time.RFC3339)))
	})
	return n, err
}

// RecordsID names the records of one policy (by digest) and --max-shared.
type RecordsID struct {
	Policy    string
	MaxShared int
}

// RecordsKept lists the records the database keeps, complete or not.
func (s *Store) RecordsKept(ctx context.Context) ([]RecordsID, error) {
	var out []RecordsID
	err := s.within(func(r *graph.Reader) error {
		for _, d := range r.Views() {
			subs, err := r.View(d).Subs()
			if err != nil {
				return err
			}
			for _, name := range subs {
				if n, ok := strings.CutPrefix(name, recordsPrefix); ok {
					m, err := strconv.Atoi(n)
					if err != nil {
						continue
					}
					out = append(out, RecordsID{Policy: d, MaxShared: m})
				}
			}
		}
		return nil
	})
	return out, err
}

// All returns every record, in query's order (by Key): for tests and
// small databases.
func (rs *Records) All(ctx context.Context) ([]*store.GroupRecord, error) {
	var out []*store.GroupRecord
	err := rs.read(ctx, func(rb *graph.Bucket) error {
		b, err := sub(rb, recID)
		if err != nil || b == nil {
			return err
		}
		return b.Ascend(nil, func(k, v []byte) (bool, error) {
			r, err := decodeRecord(string(k), v)
			out = append(out, r)
			return err == nil, err
		})
	})
	slices.SortFunc(out, func(a, b *store.GroupRecord) int { return strings.Compare(a.Key, b.Key) })
	return out, err
}

// RecordTotals is what one walk of every record counts.
type RecordTotals struct {
	Groups int // every record
	Queued int // the records in the queue
	// QueuedByVerdict counts the records in the queue by verdict.
	QueuedByVerdict map[string]int
	// QueuedByDomain counts the records in the queue by the domain of
	// any of their keys (a group counts once under each), then by
	// verdict, when Totals is given the domain of a key.
	QueuedByDomain map[string]map[string]int
	// DuplicateMembers is the members of the groups with two members or
	// more.
	DuplicateMembers int
}

// Totals walks every record, decoding only its flags and member count:
// one sequential read of the id/ bucket, for what the counts/ bucket
// does not keep (how many groups the queue holds, how many citations are
// in groups of two or more). The records hold every key of their group,
// and at ten million citations the walk mapped 2.8 GB of the file: it
// keeps the mapped pages under recordsCheckMapped as check's walk of the
// records does. With domainOf, it also decodes the keys of the records in
// the queue and counts them by the domain domainOf gives each key
// (QueuedByDomain; a key without one, "", is not counted).
func (rs *Records) Totals(ctx context.Context, domainOf func(key string) string) (RecordTotals, error) {
	t := RecordTotals{QueuedByVerdict: map[string]int{}}
	if domainOf != nil {
		t.QueuedByDomain = map[string]map[string]int{}
	}
	var seen []string
	if err := rs.Flush(ctx); err != nil {
		return t, err
	}
	n := 0
	err := rs.s.within(func(r *graph.Reader) error {
		v := r.View(rs.d)
		if v == nil {
			return nil
		}
		rb, err := v.Sub(rs.name, false)
		if err != nil {
			return err
		}
		b, err := sub(rb, recID)
		if err != nil || b == nil {
			return err
		}
		return b.Ascend(nil, func(k, v []byte) (bool, error) {
			if n++; n%viewCheckBatch == 0 {
				if err := ctx.Err(); err != nil {
					return false, err
				}
				r.LimitMapped(recordsCheckMapped)
			}
			if len(v) < 2 {
				return false, fmt.Errorf("%w: group record %s: empty (run provgraph queue --build)", graph.ErrCorrupt, k)
			}
			m, w := binary.Uvarint(v[1:])
			if w <= 0 {
				return false, fmt.Errorf("%w: group record %s: member count unreadable (run provgraph queue --build)", graph.ErrCorrupt, k)
			}
			t.Groups++
			if v[0]&2 != 0 {
				t.Queued++
				verdict, _, err := readStr(v[1+w:])
				if err != nil {
					return false, fmt.Errorf("%w: group record %s: verdict unreadable (run provgraph queue --build)", graph.ErrCorrupt, k)
				}
				t.QueuedByVerdict[verdict]++
				if domainOf != nil {
					rec, what := decodeRecordBare(string(k), v)
					if what != "" {
						return false, fmt.Errorf("%w: group record %s: %s (run provgraph queue --build)", graph.ErrCorrupt, k, what)
					}
					seen = seen[:0]
					for _, key := range rec.Keys {
						if d := domainOf(key); d != "" && !slices.Contains(seen, d) {
							seen = append(seen, d)
							m := t.QueuedByDomain[d]
							if m == nil {
								m = map[string]int{}
								t.QueuedByDomain[d] = m
							}
							m[verdict]++
						}
					}
				}
			}
			if m > 1 {
				t.DuplicateMembers += int(m)
			}
			return true, nil
		})
	})
	return t, err
}

// Dirty returns how many keys changed since the records were last made
// current: more than 0 after a run that stopped before service.KeepRecords.
func (rs *Records) Dirty(ctx context.Context) (int, error) {
	keys, err := rs.DirtyKeys(ctx, -1)
	return len(keys), err
}
