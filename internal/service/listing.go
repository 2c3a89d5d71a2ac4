package service

import (
	"bufio"
	"cmp"
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// This file lists the groups with their review state as they are found,
// a batch at a time, instead of holding every group (Reviewed): a filtered
// listing in the groups' own order needs only the decisions in memory,
// and reads the database as `provgraph groups` without decisions does
// (from the grouping view, in memory bounded by the batch, when there is
// one). Ordering by size or risk needs every group at once and stays
// with Reviewed.

// selector is a GroupFilter's test of one group, for every field but
// Queue, Sort and the page (Limit, Cursor).
type selector struct {
	f     GroupFilter
	since time.Time
}

func (f GroupFilter) selector() selector {
	s := selector{f: f}
	if f.Since != "" {
		s.since, _ = time.Parse(time.RFC3339, f.Since)
		if s.since.IsZero() {
			s.since, _ = time.Parse(time.DateOnly, f.Since)
		}
	}
	return s
}

// any says whether the filter selects among the groups at all.
func (s selector) any() bool {
	f := s.f
	return f.ID != "" || f.Verdict != "" || f.Key != "" || f.Domain != "" || f.Engine != "" || !s.since.IsZero() || f.State != ""
}

// match says whether g passes the filter; status gives its review state,
// asked for only when the filter names one.
func (s selector) match(g *query.Group, status func(*query.Group) *review.Status) bool {
	f := s.f
	if f.ID != "" && g.ID != f.ID || f.Verdict != "" && g.Verdict != f.Verdict {
		return false
	}
	if f.Key != "" && g.Key != f.Key && !slices.Contains(g.Keys, f.Key) {
		return false
	}
	if f.Domain != "" || f.Engine != "" || !s.since.IsZero() {
		ok := [3]bool{f.Domain == "", f.Engine == "", s.since.IsZero()}
		for _, m := range g.Members {
			if !ok[0] && domainOf(m.Key) == strings.ToLower(f.Domain) {
				ok[0] = true
			}
			c := m.Citation()
			if c == nil {
				continue
			}
			if !ok[1] && c.Engine == f.Engine {
				ok[1] = true
			}
			if !ok[2] {
				if t, err := time.Parse(time.RFC3339, c.ObservedAt); err == nil && !t.Before(s.since) {
					ok[2] = true
				}
			}
		}
		if !ok[0] || !ok[1] || !ok[2] {
			return false
		}
	}
	return f.State == "" || status(g).State == f.State
}

// NeedsDetail says whether the filter tests what a lean read of the
// citations leaves out (the engine, the observation time): the groups
// must then be read with query.GroupOptions.Detail.
func (f GroupFilter) NeedsDetail() bool { return f.Engine != "" || f.Since != "" }

// Listing is what a streamed listing wrote: Shown groups of the Total the
// filter selects, the cursor of the next page ("" on the last), and the
// rest of the database's report (rejected and unnormalized citations,
// counts, incomplete runs: query.GroupSet.Write's).
type Listing struct {
	Shown, Total int
	Next         string
	Rest         *query.Report
}

// ReviewedSet is the groups of a database with the decisions about them,
// to be listed with their review state as they are found
// (ReviewedSet.Write). Close it once written.
type ReviewedSet struct {
	Set   *query.GroupSet
	Index *review.Index
	done  func()
}

// ReviewedFrom reads the groups of the database under policy as
// GroupsFrom does (from the grouping view when how says so and the
// database keeps one), and its decisions.
func (d DB) ReviewedFrom(ctx context.Context, policy string, opts query.GroupOptions, how GroupsRead) (*ReviewedSet, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	ix, err := review.Load(ctx, st)
	st.Close()
	if err != nil {
		return nil, err
	}
	set, done, err := d.GroupsFrom(ctx, policy, opts, how)
	if err != nil {
		return nil, err
	}
	return &ReviewedSet{Set: set, Index: ix, done: done}, nil
}

// Close lets go of the database.
func (r *ReviewedSet) Close() {
	if r.done != nil {
		r.done()
		r.done = nil
	}
}

// ErrSortedStream is returned by ReviewedSet.Write for a filter with
// Queue: the queue's smaller groups are known only once every group is
// (Reviewed.Filter).
var ErrSortedStream = errors.New("the review queue filter holds every group: use Reviewed.Filter")

// Write lists the groups f selects, in the groups' own order, with their
// review state: encode appends one group's bytes (it runs on several
// goroutines at once, as for query.GroupSet.Write), write gets them in
// order. Every group is judged, and each one selected is encoded and
// counted (Total), but only the page's are written: a worker cannot know
// how many selected groups come before its own. With f.Sort the groups
// are written in that order (writeSorted), from a spool file. f.Queue is
// not supported: it needs every group at once.
func (r *ReviewedSet) Write(ctx context.Context, f GroupFilter, encode func(buf []byte, g *query.Group, s *review.Status) []byte, write func([]byte) error) (Listing, error) {
	if err := f.Check(); err != nil {
		return Listing{}, err
	}
	if f.Queue {
		return Listing{}, ErrSortedStream
	}
	off, err := decodeCursor(f.Cursor)
	if err != nil {
		return Listing{}, err
	}
	sel := f.selector()
	digest := r.Set.Policy().Digest
	status := func(g *query.Group) *review.Status { return r.Index.Status(review.EvidenceOf(g, digest)) }
	if f.Sort != "" {
		return r.writeSorted(ctx, f, off, sel, status, encode, write)
	}
	// Each group the filter selects is one frame: its encoding's length
	// (4 bytes, big-endian), then the encoding. The workers cannot know
	// which selected group is on the page (that needs the count of those
	// before it), so each encodes its selected groups and the ordered
	// writer below keeps the page's.
	enc := func(buf []byte, g *query.Group) []byte {
		if !sel.match(g, status) {
			return buf
		}
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0)
		buf = encode(buf, g, status(g))
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
		return buf
	}
	var l Listing
	rest, err := r.Set.Write(ctx, enc, func(p []byte) error {
		for len(p) > 0 {
			n := int(binary.BigEndian.Uint32(p))
			frame := p[4 : 4+n]
			p = p[4+n:]
			l.Total++
			if l.Total <= off || f.Limit > 0 && l.Shown == f.Limit {
				continue
			}
			if err := write(frame); err != nil {
				return err
			}
			l.Shown++
		}
		return nil
	})
	if err != nil {
		return Listing{}, err
	}
	if f.Limit > 0 && off+f.Limit < l.Total {
		l.Next = encodeCursor(off + f.Limit)
	}
	l.Rest = rest
	return l, nil
}

// sortedEntry is a selected group in a spool: its sort key, and where its
// encoding is.
type sortedEntry struct {
	key  int64
	at   int64
	size int32
}

// sortedTop is how many groups (the cursor's offset plus the page) a
// sorted listing keeps encoded in memory instead of spooling every group
// it selects: a page of the review queue then writes no file (at ten
// million citations the spool of the whole queue is some 3.6 GB).
var sortedTop = 1000 // a variable for tests

// writeSorted is Write with f.Sort. The groups are found as Write finds
// them, and each selected one is judged by its sort key; they are then
// written as Reviewed.Filter orders them (by the key, largest first,
// stable in the groups' own order). A page that ends within the first
// sortedTop groups keeps only the best of them, encoded, in a heap.
// Otherwise each selected group's encoding goes to a spool file (in
// os.TempDir, $TMPDIR, unlinked as soon as it is made, so that no exit
// leaves it behind) as it is found, and only its sort key and place in
// the spool are held, 24 bytes a group (about 10 MB for the 410,000 groups
// of ten million citations, where holding the groups took 12 GiB); the
// page's encodings are read back in order. The listing's Rest is nil, as
// for the page Reviewed.Filter returns.
func (r *ReviewedSet) writeSorted(ctx context.Context, f GroupFilter, off int, sel selector, status func(*query.Group) *review.Status, encode func(buf []byte, g *query.Group, s *review.Status) []byte, write func([]byte) error) (Listing, error) {
	sortKey := func(g *query.Group) int64 { return int64(len(g.Members)) }
	if f.Sort == "risk" {
		sortKey = func(g *query.Group) int64 { return int64(Risk(g)) }
	}
	// Each selected group is one frame: its sort key (8 bytes), its
	// encoding's length (4 bytes), then the encoding.
	frames := func(buf []byte, g *query.Group) []byte {
		if !sel.match(g, status) {
			return buf
		}
		n := len(buf)
		buf = binary.BigEndian.AppendUint64(buf, uint64(sortKey(g)))
		buf = append(buf, 0, 0, 0, 0)
		buf = encode(buf, g, status(g))
		binary.BigEndian.PutUint32(buf[n+8:], uint32(len(buf)-n-12))
		return buf
	}
	each := func(p []byte, fn func(key int64, enc []byte) error) error {
		for len(p) > 0 {
			key, size := int64(binary.BigEndian.Uint64(p)), int(binary.BigEndian.Uint32(p[8:]))
			if err := fn(key, p[12:12+size]); err != nil {
				return err
			}
			p = p[12+size:]
		}
		return nil
	}
	page := func(total int) (Listing, int, int) {
		l := Listing{Total: total}
		from, end := min(off, total), total
		if f.Limit > 0 && from+f.Limit < end {
			end = from + f.Limit
			l.Next = encodeCursor(end)
		}
		return l, from, end
	}
	if f.Limit > 0 && off+f.Limit <= sortedTop {
		var top topGroups
		total := 0
		_, err := r.Set.Write(ctx, frames, func(p []byte) error {
			return each(p, func(key int64, enc []byte) error {
				top.offer(off+f.Limit, topGroup{key: key, seq: total}, enc)
				total++
				return nil
			})
		})
		if err != nil {
			return Listing{}, err
		}
		best := top.sorted()
		l, from, end := page(total)
		for _, g := range best[min(from, len(best)):min(end, len(best))] {
			if err := write(g.enc); err != nil {
				return Listing{}, err
			}
			l.Shown++
		}
		return l, nil
	}
	spool, err := os.CreateTemp("", "provgraph-sorted-*")
	if err != nil {
		return Listing{}, fmt.Errorf("sorted listing: spool: %w", err)
	}
	defer spool.Close()
	if err := os.Remove(spool.Name()); err != nil {
		return Listing{}, fmt.Errorf("sorted listing: spool: %w", err)
	}
	bw := bufio.NewWriterSize(spool, 1<<20)
	var entries []sortedEntry
	var at int64
	_, err = r.Set.Write(ctx, frames, func(p []byte) error {
		return each(p, func(key int64, enc []byte) error {
			if _, err := bw.Write(enc); err != nil {
				return fmt.Errorf("sorted listing: spool: %w", err)
			}
			entries = append(entries, sortedEntry{key: key, at: at, size: int32(len(enc))})
			at += int64(len(enc))
			return nil
		})
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return Listing{}, err
	}
	slices.SortStableFunc(entries, func(a, b sortedEntry) int { return cmp.Compare(b.key, a.key) })
	l, from, end := page(len(entries))
	var buf []byte
	for _, e := range entries[from:end] {
		buf = slices.Grow(buf[:0], int(e.size))[:e.size]
		if _, err := spool.ReadAt(buf, e.at); err != nil {
			return Listing{}, fmt.Errorf("sorted listing: spool: %w", err)
		}
		if err := write(buf); err != nil {
			return Listing{}, err
		}
		l.Shown++
	}
	return l, nil
}

// topGroup is a selected group kept by topGroups: its sort key, its place
// among the selected groups, and its encoding.
type topGroup struct {
	key int64
	seq int
	enc []byte
}

// before says whether a comes before b in a sorted listing: a larger key,
// or an equal key and an earlier group.
func (a topGroup) before(b topGroup) bool { return a.key > b.key || a.key == b.key && a.seq < b.seq }

// topGroups keeps the first groups of a sorted listing, at most a given
// number, as a heap whose root is the last of them.
type topGroups []topGroup

// offer keeps g (its encoding copied) when it is among the first n so far.
func (h *topGroups) offer(n int, g topGroup, enc []byte) {
	if len(*h) == n {
		if !g.before((*h)[0]) {
			return
		}
		(*h)[0] = topGroup{key: g.key, seq: g.seq, enc: append((*h)[0].enc[:0], enc...)}
		heap.Fix(h, 0)
		return
	}
	g.enc = slices.Clone(enc)
	heap.Push(h, g)
}

// sorted returns the groups kept, first first.
func (h topGroups) sorted() []topGroup {
	out := slices.Clone(h)
	slices.SortFunc(out, func(a, b topGroup) int {
		if a.before(b) {
			return -1
		}
		return 1
	})
	return out
}

func (h topGroups) Len() int           { return len(h) }
func (h topGroups) Less(i, j int) bool { return h[j].before(h[i]) } // the last first
func (h topGroups) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *topGroups) Push(x any)        { *h = append(*h, x.(topGroup)) }
func (h *topGroups) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Counts returns the review counts of the groups of the set (read as
// Reviewed reads them for its counts: MinSize 2 and Review), as
// Reviewed.Counts does, counting each group as it is found instead of
// holding them.
func (r *ReviewedSet) Counts(ctx context.Context) (*review.Counts, error) {
	c := &review.Counts{ByDecision: map[string]int{}, Decisions: r.Index.Len()}
	digest := r.Set.Policy().Digest
	var mu sync.Mutex
	_, err := r.Set.Write(ctx, func(buf []byte, g *query.Group) []byte {
		s := r.Index.Status(review.EvidenceOf(g, digest))
		mu.Lock()
		countGroup(c, g, s)
		mu.Unlock()
		return buf
	}, func([]byte) error { return nil })
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Decisions reads every review decision stored in the database, without
// grouping it.
func (d DB) Decisions(ctx context.Context) (*review.Index, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return review.Load(ctx, st)
}
