package citestore

import (
	"context"
	"errors"
	"fmt"

	"github.com/provgraph/provgraph/internal/graph"
)

// A window is what the quads say of the nodes with term ids in one range,
// read in three ordered walks: their quads (SPO), the links into them
// (OSP, every run), and their terms (the dictionary). Ingest mints a
// citation's nodes together, right after its own id: among a million
// citations, four in five of the nodes a row reads lie within a few ids
// of the citation's (the policy's association aside; the rest are nodes
// met before: a raw URL cited again, its normalization and retrieval). So a Reader
// given the window of a batch of citations (SetWindow) answers most of
// their reads from it, and reads a node outside it by a point lookup as
// before: what it reads is the same either way, only the cost differs.
// The check of a view made a row by some twenty point reads a citation
// (a seek in SPO, in the POS or OSP runs whose filters let it through,
// and in the dictionary each), on pages at random: a walk reads each
// page once.
type window struct {
	lo, hi graph.ID
	// out[i] and out[i+1] bound, in outs, the (predicate, object) pairs
	// of the node lo+i, in Describe's order; in and ins the same for the
	// (subject, predicate) pairs of the links into it, in Incoming's.
	out, in   []uint32
	outs, ins [][2]graph.ID
	terms     graph.TermRange
	// dec holds the terms decoded, by id - lo, and done which of them
	// are: a slice, where the Reader's map of terms cost a probe of a
	// large map per value read.
	dec  []graph.Term
	done []bool
	// many marks the nodes with more than windowNodeLinks links into
	// them, and linksHi ends the nodes whose links w holds: neither is
	// answered from w.
	many    []bool
	linksHi graph.ID
}

// term is Reader.term for an id w holds: decoded once, noting the id of
// an IRI in r.
func (w *window) term(r *Reader, id graph.ID) (graph.Term, error) {
	i := id - w.lo
	if w.done[i] {
		return w.dec[i], nil
	}
	t, err := w.terms.Term(id)
	if err != nil {
		return t, err
	}
	if t.Kind == graph.KindIRI {
		r.idOf[t.Value] = id
	}
	w.dec[i], w.done[i] = t, true
	return t, nil
}

// holds reports whether the node with id is in w.
func (w *window) holds(id graph.ID) bool { return w != nil && id >= w.lo && id < w.hi }

// facts are the (predicate, object) pairs of the node id, which w holds.
func (w *window) facts(id graph.ID) [][2]graph.ID {
	i := id - w.lo
	return w.outs[w.out[i]:w.out[i+1]:w.out[i+1]]
}

// links are the (subject, predicate) pairs of the links into the node id,
// whose links w holds (holdsLinks).
func (w *window) links(id graph.ID) [][2]graph.ID {
	i := id - w.lo
	return w.ins[w.in[i]:w.in[i+1]]
}

// read reads w for the ids in [lo, hi) with g, reusing w's memory. The
// terms may cover less than the range (graph.TermRange's bound on their
// bytes): the range is then cut to theirs.
func (w *window) read(ctx context.Context, g *graph.Reader, lo, hi graph.ID, release func()) error {
	hi = min(hi, g.MaxID()+1)
	w.lo, w.hi = lo, lo // holds nothing until read
	if hi <= lo {
		return nil
	}
	if err := g.TermsIn(ctx, lo, hi, &w.terms); err != nil {
		return err
	}
	for id := lo; id < hi; id++ {
		if !w.terms.Holds(id) {
			hi = id
			break
		}
	}
	release()
	n := int(hi - lo)
	if cap(w.dec) < n {
		w.dec, w.done = make([]graph.Term, n), make([]bool, n)
	}
	w.dec, w.done = w.dec[:n], w.done[:n]
	clear(w.dec)
	clear(w.done)
	w.out, w.outs = csr(w.out, n), w.outs[:0]
	err := g.QuadsIn(ctx, lo, hi, func(s, p, o graph.ID) {
		if w.outs = append(w.outs, [2]graph.ID{p, o}); len(w.outs)%windowRelease == 0 {
			release()
		}
		w.out[s-lo+1] = uint32(len(w.outs))
	})
	if err != nil {
		return fmt.Errorf("citestore: reading nodes %d to %d: %w", lo, hi-1, err)
	}
	fillCSR(w.out)
	release()
	// The links: at most windowNodeLinks into one node (a class, a
	// policy, a URL cited thousands of times has more: those are read
	// by a point lookup if ever asked), and windowLinks in all, past
	// which the nodes left hold no links.
	w.in, w.ins = csr(w.in, n), w.ins[:0]
	if cap(w.many) < n {
		w.many = make([]bool, n)
	}
	w.many = w.many[:n]
	clear(w.many)
	w.linksHi = hi
	cur, start := graph.ID(0), 0
	err = g.IncomingIn(ctx, lo, hi, func(o, s, p graph.ID) error {
		if o != cur {
			cur, start = o, len(w.ins)
			if len(w.ins) >= windowLinks {
				w.linksHi = o
				return errWindowFull
			}
		}
		if len(w.ins)-start >= windowNodeLinks {
			w.ins = w.ins[:start]
			w.in[o-lo+1] = uint32(start)
			w.many[o-lo] = true
			release()
			return graph.SkipNode
		}
		if w.ins = append(w.ins, [2]graph.ID{s, p}); len(w.ins)%windowRelease == 0 {
			release()
		}
		w.in[o-lo+1] = uint32(len(w.ins))
		return nil
	})
	release()
	if err != nil && err != errWindowFull {
		return fmt.Errorf("citestore: reading links into nodes %d to %d: %w", lo, hi-1, err)
	}
	fillCSR(w.in)
	w.hi = hi
	return nil
}

// windowNodeLinks and windowLinks bound the links a window holds (16
// bytes each): into one node, and in all. Variables so that tests run
// both bounds.
var (
	windowNodeLinks = 4096
	windowLinks     = 4 << 20
)

// windowRelease is how many entries a window's walk reads between two
// calls of its release function.
const windowRelease = 1 << 14

// errWindowFull ends the walk of a window's links at windowLinks.
var errWindowFull = errors.New("citestore: the window holds as many links as it may")

// holdsLinks reports whether the links into the node id are in w.
func (w *window) holdsLinks(id graph.ID) bool {
	return w.holds(id) && id < w.linksHi && !w.many[id-w.lo]
}

// csr returns off resized to n+1 entries, all zero.
func csr(off []uint32, n int) []uint32 {
	if cap(off) < n+1 {
		off = make([]uint32, n+1)
	}
	off = off[:n+1]
	clear(off)
	return off
}

// fillCSR completes offsets set only at the end of each node that has
// pairs: a node with none ends where the one before it ended.
func fillCSR(off []uint32) {
	for i := 1; i < len(off); i++ {
		off[i] = max(off[i], off[i-1])
	}
}
