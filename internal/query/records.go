package query

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
)

// This file keeps the derived records that make a page of the review queue
// and the counts by verdict cheap: one GroupRecord per group, under one
// policy and --max-shared, written by BuildRecords from a whole grouping
// and kept current by RefreshRecords from the grouping view, one batch of
// changed citations at a time. They are derived data: the records of a
// database equal BuildRecords' on it (TestRefreshRecordsMatchesBuild).

// GroupRecord is what the queue and the counts read of one group
// (store.GroupRecord, so that a backend can keep records without
// importing query).
type GroupRecord = store.GroupRecord

// RecordStore holds the GroupRecords of one policy. MemRecords is one in
// memory; a backend keeps one beside its grouping view.
type RecordStore interface {
	// Record returns the record with the id, and false if there is none.
	Record(ctx context.Context, id string) (*GroupRecord, bool, error)
	// IDOfKey returns the id of the group whose Keys hold key.
	IDOfKey(ctx context.Context, key string) (string, bool, error)
	// Put stores rec (replacing a record of the same id) and Delete
	// removes the record of an id, both with the index by key and the
	// counts.
	Put(ctx context.Context, rec *GroupRecord) error
	Delete(ctx context.Context, id string) error
	// Queue returns up to limit queued records after the record with id
	// after ("" for the first), in query's order (by Key).
	Queue(ctx context.Context, after string, limit int) ([]*GroupRecord, error)
	// Counts returns how many groups have each verdict, and "groups".
	Counts(ctx context.Context) (map[string]int, error)
}

// recordOptions are the options records are judged under: the queue's
// (groups' defaults), with the store's --max-shared.
func recordOptions(maxShared int) GroupOptions {
	return GroupOptions{MaxShared: maxShared, MinSize: 2, Review: true}
}

// recordOf is the record of a group answered under recordOptions.
func recordOf(a *GroupAnswer) *GroupRecord {
	g := a.Group
	rec := &GroupRecord{ID: g.ID, Key: g.Key, Keys: g.Keys, Members: len(g.Members), Verdict: g.Verdict, Queued: a.Listed}
	if len(rec.Keys) == 0 {
		rec.Keys = []string{g.Key}
	}
	rec.ReviewRelation = slices.ContainsFunc(g.Relations, func(r *GroupRelation) bool { return r.Review })
	return rec
}

// BuildRecords writes the record of every group of src under policy and
// maxShared (0: model.DefaultMaxShared) into rs, from a whole grouping.
// When src keeps a grouping view usable for the policy, the groups are
// read from it a batch of keys at a time (LoadGroupsFromView) and their
// records spooled to a temporary file in os.TempDir ($TMPDIR), unlinked
// as soon as it is made so that no exit leaves it behind: memory is the
// view read's batches and the ids of the groups a relation to review
// points at, not the database. Otherwise every citation is grouped in
// memory (LoadGroups).
func BuildRecords(ctx context.Context, src Source, policy string, maxShared int, rs RecordStore) error {
	built, err := BuildRecordsFromView(ctx, src, policy, maxShared, rs, ViewRead{})
	if err != nil || built {
		return err
	}
	set, err := LoadGroups(ctx, src, policy, recordOptions(maxShared))
	if err != nil {
		return err
	}
	g := set.g
	for i := range g.groups {
		a, err := g.answer(ctx, i, false)
		if err != nil {
			return err
		}
		if err := rs.Put(ctx, recordOf(a)); err != nil {
			return err
		}
	}
	return nil
}

// BuildRecordsFromView is BuildRecords from src's grouping view of the
// policy only, read as how says: it returns false, having written
// nothing, when src keeps no view usable for the policy, where
// BuildRecords would group every citation in memory. check compares the
// records of a large database with a fresh build this way, in memory
// that does not grow with the database.
func BuildRecordsFromView(ctx context.Context, src Source, policy string, maxShared int, rs RecordStore, how ViewRead) (bool, error) {
	every := recordOptions(maxShared)
	every.MinSize = 1
	set, err := LoadGroupsFromView(ctx, src, policy, every, how)
	if err != nil || set == nil {
		return false, err
	}
	return true, buildRecordsFromView(ctx, set, rs)
}

// RecordFunc is a RecordStore that passes each record put to the
// function and holds nothing: what a build writes, for a caller that
// compares each record as it comes (check). Its reads and Delete fail.
type RecordFunc func(rec *GroupRecord) error

// errRecordFunc is the error of a RecordFunc's reads and Delete.
var errRecordFunc = errors.New("query: a RecordFunc holds no records")

// Put implements RecordStore.
func (f RecordFunc) Put(_ context.Context, rec *GroupRecord) error { return f(rec) }

// Record implements RecordStore: it fails.
func (RecordFunc) Record(context.Context, string) (*GroupRecord, bool, error) {
	return nil, false, errRecordFunc
}

// IDOfKey implements RecordStore: it fails.
func (RecordFunc) IDOfKey(context.Context, string) (string, bool, error) {
	return "", false, errRecordFunc
}

// Delete implements RecordStore: it fails.
func (RecordFunc) Delete(context.Context, string) error { return errRecordFunc }

// Queue implements RecordStore: it fails.
func (RecordFunc) Queue(context.Context, string, int) ([]*GroupRecord, error) {
	return nil, errRecordFunc
}

// Counts implements RecordStore: it fails.
func (RecordFunc) Counts(context.Context) (map[string]int, error) { return nil, errRecordFunc }

// buildRecordsFromView writes the records of every group set lists (it
// is read with MinSize 1: every group). A group is queued when it has two
// members or more or is the source or the target of a relation to review
// (what GroupAnswer.Listed says under recordOptions): the targets are
// known only once every group is read, so the records go to a spool file
// first, and into rs once the targets are known.
func buildRecordsFromView(ctx context.Context, set *GroupSet, rs RecordStore) error {
	spool, err := os.CreateTemp("", "provgraph-records-*")
	if err != nil {
		return fmt.Errorf("query: group records: spool: %w", err)
	}
	defer spool.Close()
	if err := os.Remove(spool.Name()); err != nil {
		return fmt.Errorf("query: group records: spool: %w", err)
	}
	var mu sync.Mutex
	targets := map[string]bool{}
	bw := bufio.NewWriterSize(spool, 1<<20)
	_, err = set.Write(ctx, func(buf []byte, g *Group) []byte {
		rec := recordOf(&GroupAnswer{Group: g})
		for _, r := range g.Relations {
			if r.Review && r.To != "" {
				mu.Lock()
				targets[r.To] = true
				mu.Unlock()
			}
		}
		return appendSpooled(buf, rec)
	}, func(p []byte) error {
		_, err := bw.Write(p)
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		_, err = spool.Seek(0, io.SeekStart)
	}
	if err != nil {
		return fmt.Errorf("query: group records: %w", err)
	}
	br := bufio.NewReaderSize(spool, 1<<20)
	for {
		rec, err := readSpooled(br)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("query: group records: spool: %w", err)
		}
		rec.Queued = rec.Members >= 2 || rec.ReviewRelation || targets[rec.ID]
		if err := rs.Put(ctx, rec); err != nil {
			return err
		}
	}
}

// appendSpooled appends rec to a spool: its strings length-prefixed
// (uvarint), then the number of keys and the keys, the members and the
// review-relation flag. Queued is not spooled.
func appendSpooled(b []byte, rec *GroupRecord) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	b = str(str(str(b, rec.ID), rec.Key), rec.Verdict)
	b = binary.AppendUvarint(b, uint64(len(rec.Keys)))
	for _, k := range rec.Keys {
		b = str(b, k)
	}
	b = binary.AppendUvarint(b, uint64(rec.Members))
	if rec.ReviewRelation {
		return append(b, 1)
	}
	return append(b, 0)
}

// readSpooled reads a record appendSpooled wrote; io.EOF at the end.
func readSpooled(r *bufio.Reader) (*GroupRecord, error) {
	str := func() (string, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		if _, err = io.ReadFull(r, b); err == io.EOF {
			err = io.ErrUnexpectedEOF // the length was read
		}
		return string(b), err
	}
	rec := &GroupRecord{}
	var err error
	if rec.ID, err = str(); err != nil {
		return nil, err // io.EOF only here, between records
	}
	unexpected := func(err error) error {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if rec.Key, err = str(); err != nil {
		return nil, unexpected(err)
	}
	if rec.Verdict, err = str(); err != nil {
		return nil, unexpected(err)
	}
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, unexpected(err)
	}
	rec.Keys = make([]string, n)
	for i := range rec.Keys {
		if rec.Keys[i], err = str(); err != nil {
			return nil, unexpected(err)
		}
	}
	m, err := binary.ReadUvarint(r)
	if err != nil {
		return nil, unexpected(err)
	}
	rec.Members = int(m)
	flag, err := r.ReadByte()
	if err != nil {
		return nil, unexpected(err)
	}
	rec.ReviewRelation = flag == 1
	return rec, nil
}

// RefreshRecords brings the records of rs up to date after a batch changed
// the citations of the keys seeds (the keys of the citations it added, or
// whose evidence it changed), reading the grouping view of vs; rs must
// have been up to date before the batch.
//
// A group's record is a function of what GroupOf reads for it, and that
// relation is symmetric: if the answer for key k read a posting or the
// rows that the batch changed, then the answer for the changed key reads
// k's rows. So the groups whose records may change are among the keys the
// answers for the seeds read, with two additions the symmetry misses:
//   - a redirect target that the batch takes past maxShared sources splits
//     the group its earlier sources made: its sources are seeds too when
//     they are at most maxShared plus the batch's own (the crossing is once
//     per target; past it, the number is only evidence text);
//   - a group that loses its id (a smaller key joins, or it splits): every
//     key of its old record is recomputed.
//
// Each group found is recomputed whole (GroupOf); old records of its keys
// are deleted first.
func RefreshRecords(ctx context.Context, vs ViewSource, policy string, maxShared int, seeds []string, rs RecordStore) error {
	opts := recordOptions(maxShared)
	snap, err := choose(ctx, vs, policy)
	if err != nil {
		return err
	}
	has, err := vs.HasView(ctx, snap.Policy.Digest)
	if err != nil {
		return err
	}
	if _, nerr := snap.Normalizer(); !has || nerr != nil || snap.EngineChanged() {
		return fmt.Errorf("query: refreshing group records: the database keeps no grouping view of policy %s that this build can read (rebuild the view, then the records)", snap.Policy)
	}
	norm, _ := snap.Normalizer()
	keyOf := keyOfFunc(norm)
	maxS := opts.MaxShared
	if maxS <= 0 {
		maxS = model.DefaultMaxShared
	}
	// Seeds: the changed keys, and the sources of targets they may have
	// taken past maxShared.
	all := slices.Clone(seeds)
	fromBatch := map[string]int{} // target -> seed keys redirecting to it
	for _, k := range seeds {
		rows, err := vs.KeyRows(ctx, snap.Policy.Digest, k)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for _, r := range rows {
			for _, u := range r.Redirects {
				if t := keyOf(u); t != "" && t != k && !seen[t] {
					seen[t] = true
					fromBatch[t]++
				}
			}
		}
	}
	for t, n := range fromBatch {
		srcs, err := vs.RedirectSources(ctx, snap.Policy.Digest, t)
		if err != nil {
			return err
		}
		if len(srcs) > maxS && len(srcs)-n <= maxS {
			all = append(append(all, t), srcs...)
		}
	}
	// The keys whose groups may have changed: what the seeds' answers read.
	affected := map[string]bool{}
	for _, k := range all {
		if affected[k] {
			continue
		}
		read, err := neighbourhoodOf(ctx, vs, snap, k, opts)
		if err != nil {
			return err
		}
		for _, r := range read {
			affected[r] = true
		}
	}
	// Old records of those keys go, and every key they held is recomputed
	// (a safety net: the reads above already reach every key of a group
	// that splits or joins, and no test case needs it).
	old := map[string]bool{}
	queue := slices.Sorted(mapKeys(affected))
	for len(queue) > 0 {
		k := queue[0]
		queue = queue[1:]
		id, ok, err := rs.IDOfKey(ctx, k)
		if err != nil {
			return err
		}
		if !ok || old[id] {
			continue
		}
		old[id] = true
		rec, ok, err := rs.Record(ctx, id)
		if err != nil {
			return err
		}
		if ok {
			for _, k2 := range rec.Keys {
				if !affected[k2] {
					affected[k2] = true
					queue = append(queue, k2)
				}
			}
		}
	}
	var fresh []*GroupRecord
	done := map[string]bool{}
	for _, k := range slices.Sorted(mapKeys(affected)) {
		if done[k] {
			continue
		}
		a, err := viewGroupOfKey(ctx, vs, snap, k, opts)
		if err != nil {
			if errors.Is(err, ErrNoGroup) {
				continue // not cited: an uncited redirect or relation target
			}
			return err
		}
		rec := recordOf(a)
		for _, k2 := range rec.Keys {
			done[k2] = true
		}
		fresh = append(fresh, rec)
	}
	for _, id := range slices.Sorted(mapKeys(old)) {
		if err := rs.Delete(ctx, id); err != nil {
			return err
		}
	}
	for _, rec := range fresh {
		if err := rs.Put(ctx, rec); err != nil {
			return err
		}
	}
	return nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// MemRecords is a RecordStore in memory.
type MemRecords struct {
	mu    sync.Mutex
	byID  map[string]*GroupRecord
	ofKey map[string]string
}

// NewMemRecords returns an empty MemRecords.
func NewMemRecords() *MemRecords {
	return &MemRecords{byID: map[string]*GroupRecord{}, ofKey: map[string]string{}}
}

// Record implements RecordStore.
func (m *MemRecords) Record(_ context.Context, id string) (*GroupRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	return r, ok, nil
}

// IDOfKey implements RecordStore.
func (m *MemRecords) IDOfKey(_ context.Context, key string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.ofKey[key]
	return id, ok, nil
}

// Put implements RecordStore.
func (m *MemRecords) Put(_ context.Context, rec *GroupRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.byID[rec.ID]; ok {
		for _, k := range old.Keys {
			delete(m.ofKey, k)
		}
	}
	m.byID[rec.ID] = rec
	for _, k := range rec.Keys {
		m.ofKey[k] = rec.ID
	}
	return nil
}

// Delete implements RecordStore.
func (m *MemRecords) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.byID[id]; ok {
		for _, k := range old.Keys {
			if m.ofKey[k] == id {
				delete(m.ofKey, k)
			}
		}
		delete(m.byID, id)
	}
	return nil
}

// Queue implements RecordStore (by sorting: a backend keeps the order).
func (m *MemRecords) Queue(_ context.Context, after string, limit int) ([]*GroupRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var q []*GroupRecord
	for _, r := range m.byID {
		if r.Queued {
			q = append(q, r)
		}
	}
	slices.SortFunc(q, func(a, b *GroupRecord) int { return strings.Compare(a.Key, b.Key) })
	if after != "" {
		i := slices.IndexFunc(q, func(r *GroupRecord) bool { return r.ID == after })
		if i < 0 {
			return nil, fmt.Errorf("%w: no queued group has id %s", ErrNoGroup, after)
		}
		q = q[i+1:]
	}
	if limit > 0 && len(q) > limit {
		q = q[:limit]
	}
	return q, nil
}

// Counts implements RecordStore (by counting: a backend keeps the counts).
func (m *MemRecords) Counts(context.Context) (map[string]int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := map[string]int{"groups": len(m.byID)}
	for _, r := range m.byID {
		c["verdict:"+r.Verdict]++
	}
	return c, nil
}

// All returns every record, in query's order.
func (m *MemRecords) All() []*GroupRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	var all []*GroupRecord
	for _, r := range m.byID {
		all = append(all, r)
	}
	slices.SortFunc(all, func(a, b *GroupRecord) int { return cmp.Compare(a.Key, b.Key) })
	return all
}
