package query

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/lanrat/extsort"

	"github.com/provgraph/provgraph/internal/store"
)

// ExplainFromView lists what Explain lists for an explanation by value
// ("keys", "raw-urls", "resolved-urls": ExplainsValues) without holding
// the citations: it reads the rows of the grouping view of policy in key
// order, each with its member record (what a listed group shows of the
// citation: its raw URL, normalization and retrievals' final URLs), and
// puts one record per value and citation through a sort on disk by value
// then citation id. The lines go to a LineSpool, in Explain's order: the
// lines' count heads the output, and is known only once the sort is read.
//
// Explain on a snapshot holds every citation whole (some 2 KB each: 20 GB
// at ten million). Memory here is a page of rows, the sort's working set
// (how.Mem) and the citation ids of one value; the view's pages are kept
// mapped under read.Mapped. The sort's and the spool's files go in
// sort.Dir, unlinked as they are made.
//
// It returns nil and no error when the view cannot answer: none kept for
// the policy (or not usable by this build, as for LoadGroupsFromView), or
// its rows carry no member records (a view made before format 7); the
// caller then explains from a snapshot.
func ExplainFromView(ctx context.Context, src Source, policy, what string, read ViewRead, sort DiskSort) (*LineSpool, error) {
	value, ok := ExplainsValues(what)
	if !ok {
		return nil, fmt.Errorf("query: explain %q from the grouping view: want keys, raw-urls or resolved-urls", what)
	}
	vs, ok := src.(ViewSource)
	if !ok {
		return nil, nil
	}
	pager, ok := src.(RowPager)
	if !ok {
		return nil, nil
	}
	snap, err := usableView(ctx, vs, policy)
	if snap == nil || err != nil {
		return nil, err
	}
	d := snap.Policy.Digest
	first, err := pager.RowsAfter(ctx, d, nil, 1)
	if err != nil {
		return nil, fmt.Errorf("query: rows of the grouping view of policy %s: %w", snap.Policy, err)
	}
	if len(first) > 0 && first[0].Member == nil {
		return nil, nil
	}
	if sort.Dir == "" {
		sort.Dir = os.TempDir()
	}
	if sort.Mem <= 0 {
		sort.Mem = DefaultSortMem
	}
	if read.Mapped <= 0 {
		read.Mapped = DefaultViewMapped
	}
	spool, err := NewLineSpool(sort.Dir)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan string, 4096)
	sorter, out, errs := extsort.Strings(in, sort.config(1))
	go sorter.Sort(ctx)
	readErr := make(chan error, 1)
	go func() {
		defer close(in)
		readErr <- explainRows(ctx, src, pager, d, read.Mapped, value, in)
	}()
	err = spool.fill(out)
	if err == nil {
		err = <-errs
	} else {
		cancel()
		for range out {
		}
	}
	if rerr := <-readErr; err == nil || errors.Is(err, context.Canceled) && rerr != nil {
		err = rerr
	}
	if err == nil {
		err = spool.Done()
	}
	if err != nil {
		spool.Close()
		return nil, err
	}
	spool.Policy, spool.Warnings = snap.Policy, runWarnings(incompleteRuns(snap.Runs))
	return spool, nil
}

// explainRows reads the rows of view d in pages, on a read view of src
// when it gives one (its mapped pages kept under mapped), and sends a sort
// record for each value of each row's member.
func explainRows(ctx context.Context, src Source, pager RowPager, d string, mapped int64, value func(*Citation) []string, in chan<- string) error {
	walk := func(pager RowPager) error {
		look, _ := pager.(mappedLooker)
		var after *store.RowPos
		var rec []byte
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			page, err := pager.RowsAfter(ctx, d, after, viewPageRows)
			if err != nil {
				return fmt.Errorf("query: rows of the grouping view: %w", err)
			}
			if len(page) == 0 {
				return nil
			}
			if look != nil {
				look.LookMapped()
			}
			last := page[len(page)-1]
			after = &store.RowPos{Key: last.Key, CitationID: last.CitationID}
			for _, r := range page {
				if r.Member == nil {
					return fmt.Errorf("query: the grouping view's row of citation %s has no member record, as others do (rebuild the view): %w", r.CitationID, store.ErrDamaged)
				}
				for _, v := range value(r.Member) {
					rec = appendValueRecord(rec[:0], v, r.CitationID)
					select {
					case in <- string(rec):
					case <-ctx.Done():
						return ctx.Err()
					}
				}
			}
		}
	}
	vr, ok := src.(store.Viewer)
	if !ok {
		return walk(pager)
	}
	return vr.View(ctx, func(r store.Reader) error {
		p, ok := r.(RowPager)
		if !ok {
			p = pager
		}
		if k, ok := r.(mappedKeeper); ok {
			k.KeepMappedUnder(mapped)
		}
		return walk(p)
	})
}

// mappedLooker is a read view that can keep its mapped pages under its
// limit at once (citestore.Store.LookMapped), where it would look only
// every few dozen reads: a page of rows maps many pages.
type mappedLooker interface{ LookMapped() }

// appendValueRecord appends a sort record of value v and citation id: v
// with each NUL written as NUL 0xFF, then NUL NUL, then id. Records then
// sort as (v, id) pairs do, whatever bytes v holds: a NUL NUL ends v
// only, and sorts before any byte v could go on with.
func appendValueRecord(buf []byte, v, id string) []byte {
	for i := 0; i < len(v); i++ {
		buf = append(buf, v[i])
		if v[i] == 0 {
			buf = append(buf, 0xff)
		}
	}
	buf = append(buf, 0, 0)
	return append(buf, id...)
}

// splitValueRecord returns the value and citation id of a record
// appendValueRecord made.
func splitValueRecord(rec string) (v, id string, err error) {
	i := strings.Index(rec, "\x00\x00")
	if i < 0 {
		return "", "", errors.New("query: explain: bad sort record")
	}
	return strings.ReplaceAll(rec[:i], "\x00\xff", "\x00"), rec[i+2:], nil
}

// A LineSpool holds the lines of an explanation in a temporary file,
// unlinked as soon as it is made, so that no exit leaves it behind: the
// lines of stats --explain at ten million citations (every citation's
// id, in the lines of every group, key or URL) are written out as they
// are found and read back to be printed, the count first.
type LineSpool struct {
	Policy PolicyRef
	// Warnings are about the database (incomplete runs), as a
	// listing's (GroupSet.Warnings).
	Warnings []string

	f   *os.File
	w   *bufio.Writer
	n   int
	buf []byte
}

// NewLineSpool makes an empty spool in dir (os.TempDir() when empty).
// Add the lines, then Done; Close frees it.
func NewLineSpool(dir string) (*LineSpool, error) {
	f, err := tempUnlinked(dir, "explain")
	if err != nil {
		return nil, err
	}
	return &LineSpool{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Add appends line l.
func (s *LineSpool) Add(l ExplainLine) error {
	s.buf = appendString(s.buf[:0], l.Item)
	s.buf = appendString(s.buf, l.Group)
	s.buf = binary.AppendUvarint(s.buf, uint64(len(l.Members)))
	for _, id := range l.Members {
		s.buf = appendString(s.buf, id)
	}
	if _, err := s.w.Write(s.buf); err != nil {
		return fmt.Errorf("explain: temporary file: %w", err)
	}
	s.n++
	return nil
}

// fill writes a line for each run of records of one value in sorted.
func (s *LineSpool) fill(sorted <-chan string) error {
	var item string
	var ids []string
	flush := func() error {
		if len(ids) == 0 {
			return nil
		}
		err := s.Add(ExplainLine{Item: item, Members: ids})
		ids = ids[:0]
		return err
	}
	for rec := range sorted {
		v, id, err := splitValueRecord(rec)
		if err != nil {
			return err
		}
		if len(ids) > 0 && v != item {
			if err := flush(); err != nil {
				return err
			}
		}
		item = v
		ids = append(ids, id)
	}
	return flush()
}

// Done ends the writing: call it before Len and Each.
func (s *LineSpool) Done() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("explain: temporary file: %w", err)
	}
	return nil
}

// Len returns how many lines the spool holds.
func (s *LineSpool) Len() int { return s.n }

// Each calls fn with each line, in order; it may be called again.
func (s *LineSpool) Each(fn func(ExplainLine) error) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("explain: temporary file: %w", err)
	}
	r := bufio.NewReaderSize(s.f, 64<<10)
	str := func() (string, error) { return readStringFrom(r) }
	for range s.n {
		item, err := str()
		if err != nil {
			return fmt.Errorf("explain: temporary file: %w", err)
		}
		group, err := str()
		if err != nil {
			return fmt.Errorf("explain: temporary file: %w", err)
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return fmt.Errorf("explain: temporary file: %w", err)
		}
		l := ExplainLine{Item: item, Group: group, Members: make([]string, 0, min(n, 1<<16))}
		for range n {
			id, err := str()
			if err != nil {
				return fmt.Errorf("explain: temporary file: %w", err)
			}
			l.Members = append(l.Members, id)
		}
		if err := fn(l); err != nil {
			return err
		}
	}
	return nil
}

// Close removes the spool (its file is unlinked already: closing frees
// its space).
func (s *LineSpool) Close() error { return s.f.Close() }
