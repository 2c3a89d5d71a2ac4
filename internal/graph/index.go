package graph

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"

	"go.etcd.io/bbolt"
)

// tuple is one index entry: the four term ids of a quad in the index's
// order (the graph id last in every order, 0 for the default graph).
type tuple [4]uint32

// cmp orders tuples by their ids in order. It compares them as two
// 64-bit halves: sorting a batch's tuples in three orders is a tenth of an
// ingest's CPU, and the loop of four compares was most of it.
func (a tuple) cmp(b tuple) int {
	x, y := uint64(a[0])<<32|uint64(a[1]), uint64(b[0])<<32|uint64(b[1])
	if x == y {
		x, y = uint64(a[2])<<32|uint64(a[3]), uint64(b[2])<<32|uint64(b[3])
	}
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// keySize is the size of a chunk key: the chunk's first tuple, big-endian,
// so that bbolt's byte order is tuple order.
const keySize = 16

func putKey(k []byte, t tuple) {
	for i, v := range t {
		binary.BigEndian.PutUint32(k[4*i:], v)
	}
}

func keyTuple(k []byte) tuple {
	var t tuple
	for i := range t {
		t[i] = binary.BigEndian.Uint32(k[4*i:])
	}
	return t
}

// Chunk values. An index is a sorted set of tuples cut into chunks; each
// chunk is one bbolt key-value pair whose key is its first tuple and whose
// value holds the tuples after the first, each relative to the one before:
//
//	uvarint(da<<1 | hasGraph)   da = a - prev.a
//	uvarint(b - prev.b) if da == 0, else uvarint(b)
//	uvarint(c - prev.c) if da == 0 and b == prev.b, else uvarint(c)
//	uvarint(g)          if hasGraph
//
// A subject's quads in the SPO order typically cost 4 to 6 bytes each,
// against 16 bytes of key plus 16 of bbolt's per-element header for a
// key per quad.
const (
	// chunkMax is the value size above which a chunk is split.
	chunkMax = 768
	// chunkTarget is the size of the pieces a split chunk is cut into:
	// room is left for appends, which is how most chunks grow (new ids
	// are larger than every stored one).
	chunkTarget = 512
)

func appendEntry(dst []byte, prev, t tuple) []byte {
	da := t[0] - prev[0]
	hdr := uint64(da) << 1
	if t[3] != 0 {
		hdr |= 1
	}
	dst = appendUvarint(dst, hdr)
	if da == 0 {
		dst = appendUvarint(dst, uint64(t[1]-prev[1]))
	} else {
		dst = appendUvarint(dst, uint64(t[1]))
	}
	if da == 0 && t[1] == prev[1] {
		dst = appendUvarint(dst, uint64(t[2]-prev[2]))
	} else {
		dst = appendUvarint(dst, uint64(t[2]))
	}
	if t[3] != 0 {
		dst = appendUvarint(dst, uint64(t[3]))
	}
	return dst
}

var errBadChunk error = corruptError("undecodable index chunk")

// decodeChunk appends to dst the tuples of the chunk with key k and value v.
func decodeChunk(dst []tuple, k, v []byte) ([]tuple, error) {
	if len(k) != keySize {
		return dst, fmt.Errorf("%w: key of %d bytes", errBadChunk, len(k))
	}
	t := keyTuple(k)
	dst = append(dst, t)
	for len(v) > 0 {
		var ok bool
		if t, v, ok = decodeNext(t, v); !ok {
			return dst, fmt.Errorf("%w: bad varint at %x", errBadChunk, k)
		}
		dst = append(dst, t)
	}
	return dst, nil
}

// decodeNext decodes the tuple after prev from the front of v (not
// empty), and returns it with the rest of v; ok is false when v does not
// hold a whole entry.
func decodeNext(prev tuple, v []byte) (t tuple, rest []byte, ok bool) {
	x, n := uvarint(v)
	if n <= 0 || x>>1 > 0xFFFFFFFF {
		return t, v, false
	}
	v = v[n:]
	da := uint32(x >> 1)
	t[0] = prev[0] + da
	b, n := uvarint(v)
	if n <= 0 || b > 0xFFFFFFFF {
		return t, v, false
	}
	v = v[n:]
	if da == 0 {
		t[1] = prev[1] + uint32(b)
	} else {
		t[1] = uint32(b)
	}
	c, n := uvarint(v)
	if n <= 0 || c > 0xFFFFFFFF {
		return t, v, false
	}
	v = v[n:]
	if da == 0 && t[1] == prev[1] {
		t[2] = prev[2] + uint32(c)
	} else {
		t[2] = uint32(c)
	}
	if x&1 == 1 {
		g, n := uvarint(v)
		if n <= 0 || g > 0xFFFFFFFF {
			return t, v, false
		}
		v = v[n:]
		t[3] = uint32(g)
	}
	return t, v, true
}

// arena hands out byte slices that stay valid until the transaction ends,
// as bbolt requires of the keys and values given to Put. reset makes its
// blocks free for the next transaction, keeping up to arenaKept bytes of
// them: a transaction that merges runs may take hundreds of megabytes,
// which are given back to the collector, while an ordinary batch's few
// megabytes are reused.
type arena struct {
	buf  []byte   // the block being handed out
	used [][]byte // the blocks handed out before buf in this transaction
	free [][]byte // blocks to hand out again
}

// arenaBlock is the size of an arena's blocks; a larger allocation gets a
// block of its own. arenaKept is how much reset keeps.
const (
	arenaBlock = 1 << 20
	arenaKept  = 32 << 20
)

func (a *arena) alloc(n int) []byte {
	if cap(a.buf)-len(a.buf) < n {
		if a.buf != nil {
			a.used = append(a.used, a.buf)
		}
		a.buf = nil
		if n <= arenaBlock && len(a.free) > 0 {
			a.buf = a.free[len(a.free)-1][:0]
			a.free = a.free[:len(a.free)-1]
		} else {
			a.buf = make([]byte, 0, max(n, arenaBlock))
		}
	}
	b := a.buf[len(a.buf) : len(a.buf)+n : len(a.buf)+n]
	a.buf = a.buf[:len(a.buf)+n]
	return b
}

// reset frees every slice alloc handed out: none may be used after.
func (a *arena) reset() {
	if a.buf != nil {
		a.used = append(a.used, a.buf)
		a.buf = nil
	}
	kept := len(a.free) * arenaBlock
	for _, b := range a.used {
		if cap(b) == arenaBlock && kept < arenaKept {
			a.free = append(a.free, b[:0])
			kept += arenaBlock
		}
	}
	clear(a.used)
	a.used = a.used[:0]
}

func (a *arena) copy(b []byte) []byte {
	out := a.alloc(len(b))
	copy(out, b)
	return out
}

// indexWriter inserts sorted tuples into one index bucket.
type indexWriter struct {
	b     *bbolt.Bucket
	mem   *arena
	pg    *pager
	old   []tuple // scratch: a chunk's tuples
	out   []tuple // scratch: merged tuples
	enc   []byte  // scratch: a chunk value being encoded
	piece []byte  // scratch: a piece of a split chunk
}

// insert adds ts (sorted, without repeats) to the index. dup is called
// with the position in ts of each tuple that was already stored; those
// are left as they are.
func (w *indexWriter) insert(ts []tuple, dup func(i int)) error {
	c := w.b.Cursor()
	for i := 0; i < len(ts); {
		// The chunk for ts[i] is the last one whose first tuple is not
		// after ts[i]; when ts[i] precedes every chunk, it is the first.
		k, v := seekChunk(c, ts[i])
		w.pg.read()
		var old []tuple
		var oldKey []byte
		var err error
		if k != nil {
			if old, err = decodeChunk(w.old[:0], k, v); err != nil {
				return err
			}
			w.old = old
			oldKey = k
		}
		// The tuples of ts that belong in this chunk are those before the
		// next chunk's first tuple.
		j := len(ts)
		if k != nil {
			if nk, _ := c.Next(); nk != nil {
				if len(nk) != keySize {
					return fmt.Errorf("%w: key of %d bytes", errBadChunk, len(nk))
				}
				next := keyTuple(nk)
				j = i + 1
				for j < len(ts) && ts[j].cmp(next) < 0 {
					j++
				}
			}
		}
		merged, added := w.merge(old, ts[i:j], i, dup)
		i = j
		if added == 0 {
			continue
		}
		if oldKey != nil && keyTuple(oldKey) != merged[0] {
			oldKey = w.mem.copy(oldKey)
			if err := w.b.Delete(oldKey); err != nil {
				return err
			}
		}
		if err := w.write(merged); err != nil {
			return err
		}
		c = w.b.Cursor() // writes may invalidate the cursor
	}
	return nil
}

// merge merges old and add (both sorted) into w.out, calling dup for the
// tuples of add (numbered from base) that old has.
func (w *indexWriter) merge(old, add []tuple, base int, dup func(int)) ([]tuple, int) {
	out := w.out[:0]
	added := 0
	i, j := 0, 0
	for i < len(old) || j < len(add) {
		switch {
		case j == len(add):
			out = append(out, old[i:]...)
			i = len(old)
		case i == len(old):
			out = append(out, add[j:]...)
			added += len(add) - j
			j = len(add)
		default:
			switch c := old[i].cmp(add[j]); {
			case c < 0:
				out = append(out, old[i])
				i++
			case c > 0:
				out = append(out, add[j])
				added++
				j++
			default:
				out = append(out, old[i])
				if dup != nil {
					dup(base + j)
				}
				i++
				j++
			}
		}
	}
	w.out = out
	return out, added
}

// write stores ts (sorted) as one chunk, or as several of about
// chunkTarget bytes when one would exceed chunkMax.
func (w *indexWriter) write(ts []tuple) error {
	enc := w.enc[:0]
	for i := 1; i < len(ts); i++ {
		enc = appendEntry(enc, ts[i-1], ts[i])
	}
	w.enc = enc
	if len(enc) <= chunkMax {
		return w.put(ts[0], enc)
	}
	// Cut into pieces of about chunkTarget bytes, keeping at least 8
	// tuples for the last piece. Each piece's first tuple is its key.
	start := 0
	piece := w.piece[:0]
	for i := 1; i < len(ts); i++ {
		if i == start {
			continue
		}
		piece = appendEntry(piece, ts[i-1], ts[i])
		if len(piece) >= chunkTarget && len(ts)-i-1 >= 8 {
			if err := w.put(ts[start], piece); err != nil {
				return err
			}
			start, piece = i+1, piece[:0]
		}
	}
	w.piece = piece
	return w.put(ts[start], piece)
}

func (w *indexWriter) put(first tuple, val []byte) error {
	k := w.mem.alloc(keySize)
	putKey(k, first)
	return w.b.Put(k, w.mem.copy(val))
}

// seekChunk positions c on the chunk that holds t if the index (or run)
// has it: the last chunk whose first tuple is not after t, or the first
// chunk when t precedes them all. It returns nil when there is no chunk.
// A run's count key, shorter than a chunk key, sorts before every chunk
// and is stepped over.
func seekChunk(c kvCursor, t tuple) (k, v []byte) {
	var key [keySize]byte
	putKey(key[:], t)
	k, v = c.Seek(key[:])
	if k != nil && bytes.Equal(k, key[:]) {
		return k, v
	}
	// The steps back, and over a run's count and filter, want keys: a
	// pageCursor then reads no value until the chunk is found, not the
	// megabytes of a filter it steps over.
	if pc, ok := c.(*pageCursor); ok {
		pc.keyOnly = true
		defer func() {
			pc.keyOnly = false
			if k != nil {
				k, v = pc.keyValue()
			}
		}()
	}
	var pk, pv []byte
	if k == nil {
		pk, pv = c.Last()
	} else {
		pk, pv = c.Prev()
	}
	switch {
	case pk != nil && len(pk) == keySize:
		return pk, pv
	case pk != nil:
		return c.Next()
	}
	k, v = c.First()
	for k != nil && len(k) != keySize { // a run's count and filter
		k, v = c.Next()
	}
	return k, v
}

// scanRange calls fn for every tuple t of the index with lo <= t <= hi.
// It decodes a chunk's tuples one at a time and stops at the first past
// hi: a point lookup (a node's quads in SPO) wants a few tuples of a chunk
// of a hundred, and decoding whole chunks into a buffer was a fifth of a
// lineage's time.
func scanRange(b *bbolt.Bucket, lo, hi tuple, fn func(tuple) error) error {
	return scanCursor(b.Cursor(), lo, hi, fn)
}

// scanCursor is scanRange with a cursor on the index's bucket.
func scanCursor(c kvCursor, lo, hi tuple, fn func(tuple) error) error {
	k, v := seekChunk(c, lo)
	for ; k != nil; k, v = c.Next() {
		if len(k) != keySize {
			return fmt.Errorf("%w: key of %d bytes", errBadChunk, len(k))
		}
		t := keyTuple(k)
		if t.cmp(hi) > 0 {
			return nil
		}
		for {
			if t.cmp(hi) > 0 {
				return nil
			}
			if t.cmp(lo) >= 0 {
				if err := fn(t); err != nil {
					return err
				}
			}
			if len(v) == 0 {
				break
			}
			var ok bool
			if t, v, ok = decodeNext(t, v); !ok {
				return fmt.Errorf("%w: bad varint at %x", errBadChunk, k)
			}
		}
	}
	return cursorErr(c)
}

// sortTuples sorts ts and drops repeats.
func sortTuples(ts []tuple) []tuple {
	slices.SortFunc(ts, tuple.cmp)
	return slices.Compact(ts)
}
