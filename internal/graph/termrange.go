package graph

import (
	"context"
	"encoding/binary"
	"fmt"
)

// TermRange holds the stored terms with ids in one range, read in one
// ordered walk of the dictionary (Reader.TermsIn) and decoded one at a
// time when asked (Term). A reader that needs the terms of nodes minted
// together (the check of a view reads a window of citations at a time)
// pays one walk over the dictionary's leaves for the range, where a
// lookup of each term paid a seek; the terms it never asks for are never
// decoded. Its memory is reused from one range to the next.
type TermRange struct {
	from, to ID
	// off[i] and off[i+1] bound the encoding of term from+i in buf; an
	// id the dictionary lacks has an empty encoding, which no stored
	// term has.
	off []uint32
	buf []byte
}

// Holds reports whether id is in the range read.
func (t *TermRange) Holds(id ID) bool { return id >= t.from && id < t.to && t.to > 0 }

// Term decodes the term with id, which must be in the range (Holds). An
// id the dictionary lacks is an error wrapping ErrCorrupt, as Decode's.
func (t *TermRange) Term(id ID) (Term, error) {
	i := id - t.from
	enc := t.buf[t.off[i]:t.off[i+1]]
	if len(enc) == 0 {
		return Term{}, fmt.Errorf("term %d is used by a quad but %w", id, errMissingTerm)
	}
	tm, err := decodeTerm(enc)
	if err != nil {
		return Term{}, fmt.Errorf("term %d: %w", id, err)
	}
	return tm, nil
}

// TermsIn reads into t the stored terms with ids in [from, to): one walk
// of the dictionary in id order, by pread when the transaction allows it
// (a range is pages no other read of the walk touches again). Ids beyond
// the dictionary (MaxID) are left out of the range, and so are the ids
// past termRangeBytes of encodings: Holds says which ids t holds.
func (r *Reader) TermsIn(ctx context.Context, from, to ID, t *TermRange) (err error) {
	if from < 1 {
		from = 1
	}
	to = min(to, r.MaxID()+1)
	t.from, t.to, t.buf = from, from, t.buf[:0]
	if to <= from {
		t.off = append(t.off[:0], 0)
		return nil
	}
	n := int(to - from)
	if cap(t.off) < n+1 {
		t.off = make([]uint32, n+1)
	}
	t.off = t.off[:n+1]
	g := r.guard(&err)
	defer g.done()
	c := r.s.readCursor(r.tx, r.tx.Bucket([]byte(termsBucket)))
	var key [4]byte
	idKey(&key, uint32(from))
	next := 0 // the index of the next id whose offset is unset
	i := 0
	for k, v := c.Seek(key[:]); k != nil; k, v = c.Next() {
		if len(k) != 4 {
			return corruptf("the dictionary holds key %x, not a term id", k)
		}
		id := binary.BigEndian.Uint32(k)
		if id >= uint32(to) {
			break
		}
		if i++; i%65536 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		j := int(id - uint32(from))
		for ; next <= j; next++ {
			t.off[next] = uint32(len(t.buf))
		}
		if len(v) == 0 {
			return corruptf("term %d has an empty encoding", id)
		}
		if len(t.buf)+len(v) > termRangeBytes && len(t.buf) > 0 {
			t.to = ID(id)
			return nil
		}
		t.buf = append(t.buf, v...)
	}
	if err := cursorErr(c); err != nil {
		return fmt.Errorf("reading terms %d to %d: %w", from, to-1, err)
	}
	for ; next <= n; next++ {
		t.off[next] = uint32(len(t.buf))
	}
	t.to = to
	return nil
}

// termRangeBytes bounds a TermRange's encodings: a range whose terms
// are larger (long literals) is cut short, and the terms past the cut are
// read one by one by its caller.
var termRangeBytes = 256 << 20
