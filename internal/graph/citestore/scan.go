package citestore

import (
	"context"
	"slices"
	"strconv"
	"sync"

	"github.com/provgraph/provgraph/internal/cores"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Scan implements store.Scanner by term id: the loader (load.go) reads
// every citation's nodes in one pass over the SPO index on one read
// transaction, decodes the terms the fields show, and the transaction
// ends; the rows are then made on every core from those arrays and handed
// to fn in citation id order. Handles are term ids (Len is the largest
// term id, in every field), so a query can index arrays by them as it
// would by the ids themselves. The Texts returned keep the arrays, for
// Citations.
//
// A million synthetic citations scan in about two seconds this way,
// where reading each citation's nodes by index lookups took 131 s.
func (s *Store) Scan(ctx context.Context, policyDigest string, f store.Fields, fn func(*store.Row) error) (store.Texts, error) {
	var sc *scan
	err := s.within(func(r *graph.Reader) error {
		var err error
		sc, err = newScan(ctx, r, policyDigest, f)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := sc.rows(ctx, fn); err != nil {
		return nil, err
	}
	return sc, nil
}

// StoredPolicies implements store.Catalog.
func (s *Store) StoredPolicies(ctx context.Context) ([]store.PolicyRef, error) {
	if s.r != nil {
		// In a view, the view's Reader reads them once: a lineage asks
		// for them to choose its policy and again to name the policies
		// its citations were normalized under.
		pols, err := s.viewReader(ctx).policiesOnce()
		return slices.Clone(pols), err
	}
	var out []store.PolicyRef
	err := s.within(func(r *graph.Reader) (err error) {
		out, err = NewReader(ctx, r).Policies()
		return err
	})
	return out, err
}

// Runs implements store.Catalog.
func (s *Store) Runs(ctx context.Context) ([]store.Run, error) {
	var out []store.Run
	err := s.within(func(r *graph.Reader) (err error) {
		out, err = NewReader(ctx, r).Runs()
		return err
	})
	return out, err
}

// within runs fn on the read transaction of Within or View, or on a new
// one.
func (s *Store) within(fn func(*graph.Reader) error) error {
	if s.r != nil {
		return fn(s.r)
	}
	return s.g.Read(fn)
}

// scan is one scan's arrays: the gathered citations in id order (row k
// is g.parts[k]), and the Texts of its handles.
type scan struct {
	g    *gathered
	f    store.Fields
	pool sync.Pool
}

// rowFields are the fields that fill a Row beside its id.
const rowFields = store.FieldRaw | store.FieldKey | store.FieldContent | store.FieldFinalURL |
	store.FieldCanonical | store.FieldRelations | store.FieldEvidence

func newScan(ctx context.Context, r *graph.Reader, policyDigest string, f store.Fields) (*scan, error) {
	pols, err := NewReader(ctx, r).Policies()
	if err != nil {
		return nil, err
	}
	var pol store.PolicyRef // the zero policy normalized nothing
	for _, p := range pols {
		if p.Digest == policyDigest {
			pol = p
		}
	}
	l := newLoader(ctx, r)
	g, err := l.gather(pol, f&store.FieldDetail == 0 || f&store.FieldCitation == 0)
	if err != nil {
		return nil, err
	}
	sc := &scan{g: g, f: f}
	sc.pool.New = func() any { return g.builder() }
	// Put the citations in citation id order, the order of the rows: a
	// group's members, numbered by row, are then near each other in
	// g.parts, and a row needs no table to find its citation. The order
	// is sorted as part numbers (a pair of id text and number was 24 bytes
	// a citation more) and applied in place, a cycle of the permutation
	// at a time (a sorted copy was 28 more): this runs while the scan
	// holds nearly all it will, so what it allocates raises the peak.
	n := len(g.parts)
	order := make([]int32, n) // row -> part
	for i := range order {
		order[i] = int32(i)
	}
	cores.SortByText(order, func(i int32) string { return l.names.at(g.parts[i].id) })
	for i := range order {
		if order[i] < 0 {
			continue
		}
		// Row j takes the part at order[j], along the cycle through i;
		// a row done is marked -1.
		first := g.parts[i]
		j := i
		for {
			k := int(order[j])
			order[j] = -1
			if k == i {
				g.parts[j] = first
				break
			}
			g.parts[j] = g.parts[k]
			j = k
		}
	}
	return sc, nil
}

// Text implements store.Texts: a handle is a term id.
func (sc *scan) Text(_ store.Fields, h store.Handle) string {
	return sc.g.l.names.at(graph.ID(h))
}

// Len implements store.Texts.
func (sc *scan) Len(store.Fields) int { return int(sc.g.l.names.max) }

// Citations implements store.Texts, with a builder per goroutine at a
// time (its caches are not shared).
func (sc *scan) Citations(rows []int32, dst []store.Citation) {
	if sc.f&store.FieldCitation == 0 {
		return
	}
	b := sc.pool.Get().(*builder)
	clear(b.norms)
	for i, r := range rows {
		b.fill(&dst[i], &sc.g.parts[r])
	}
	sc.pool.Put(b)
}

// rowLists are the handle lists of a Row, in the order a worker lays them
// out per row.
const (
	listContent = iota
	listFinalURL
	listCanonical
	listRelations
	listRedirects
	numLists
)

// rowPart is what one core made of its range of rows: every row's handle
// lists (lists[off[k*numLists+j]:off[k*numLists+j+1]] is list j of its
// k-th row) and evidence (ev[evOff[k]:evOff[k+1]]).
type rowPart struct {
	lists []store.Handle
	off   []int32
	ev    []store.Evidence
	evOff []int32
}

// rows makes the rows on every core, a range each, and hands them to fn
// in order on the calling goroutine.
func (sc *scan) rows(ctx context.Context, fn func(*store.Row) error) error {
	g, l, f := sc.g, sc.g.l, sc.f
	n := len(g.parts)
	var row store.Row
	if f&rowFields == 0 {
		for i := range n {
			if i%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			row.ID = l.names.at(g.parts[i].id)
			if err := fn(&row); err != nil {
				return err
			}
		}
		return ctx.Err()
	}
	// The rows are made a chunk at a time, on every core, and handed over
	// before the next chunk is made, into the same buffers: made all at
	// once, they were about 40 bytes a citation held beside what the
	// caller builds from them (400 MB at ten million citations).
	//
	// Two chunks are in hand at once: the next is made on every core while
	// the caller takes this one, on the calling goroutine (made one after
	// the other, the caller's work on the rows ran on one core while the
	// others waited for it).
	const (
		fRejected = 1 << iota
		fKeyContent
		fRelated
	)
	nw := cores.N()
	type chunk struct {
		raw, key []store.Handle
		flags    []uint8 // rejected, keyContent, related
		parts    []rowPart
	}
	var bufs [2]chunk
	for b := range bufs {
		m := min(n, rowChunk)
		bufs[b] = chunk{make([]store.Handle, m), make([]store.Handle, m), make([]uint8, m), make([]rowPart, nw)}
	}
	makeChunk := func(c *chunk, base int) {
		raw, key, flags, parts := c.raw, c.key, c.flags, c.parts
		m := min(rowChunk, n-base)
		cores.Split(m, func(w, lo, hi int) {
			p := &parts[w]
			p.lists, p.off, p.ev, p.evOff = p.lists[:0], append(p.off[:0], 0), p.ev[:0], append(p.evOff[:0], 0)
			clear(raw[lo:hi])
			clear(key[lo:hi])
			clear(flags[lo:hi])
			var hops []graph.ID // scratch
			add := func(h store.Handle) {
				if h != 0 {
					p.lists = append(p.lists, h)
				}
			}
			for i := lo; i < hi; i++ {
				pt := &g.parts[base+i]
				if f&store.FieldRaw != 0 {
					raw[i] = store.Handle(pt.rawText)
				}
				if f&store.FieldKey != 0 && pt.norm != 0 {
					if l.one(pErrorCode, pt.norm) != "" {
						flags[i] |= fRejected
					} else if k := l.get(pText, pt.key); k != 0 {
						key[i] = store.Handle(k)
						if l.one(pCompare, pt.key) == string(normalize.CompareContent) {
							flags[i] |= fKeyContent
						}
					}
				}
				related := len(l.span(pQualifiedRelation, pt.node)) > 0
				var redirects []store.Handle // at most one per retrieval, rarely any
				for j := range numLists {
					listStart := len(p.lists)
					switch j {
					case listContent:
						if f&store.FieldContent != 0 {
							for _, rt := range l.span(pRetrievedIn, pt.node) {
								if h := l.get(pContentHash, rt); l.names.at(h) != "" {
									add(store.Handle(h))
								}
							}
						}
					case listFinalURL:
						for _, rt := range l.span(pRetrievedIn, pt.node) {
							final := l.get(pFinalURL, rt)
							if l.names.at(final) == "" {
								final = 0
							}
							if f&store.FieldFinalURL != 0 {
								add(store.Handle(final))
							}
							hops = l.appendAll(hops[:0], pHop, rt)
							if final != 0 && len(hops) > 0 {
								related = true
								cross := false
								for _, h := range hops {
									cross = cross || l.one(pCrossesHost, h) == "true"
								}
								if !cross && f&store.FieldFinalURL != 0 {
									redirects = append(redirects, store.Handle(final))
								}
							}
							if len(g.declsOf[rt]) > 0 {
								related = true
							}
						}
					case listCanonical:
						if f&store.FieldCanonical != 0 {
							for _, rt := range l.span(pRetrievedIn, pt.node) {
								for _, d := range g.declsOf[rt] {
									if u := l.get(pDeclaredURL, d); l.names.at(u) != "" {
										add(store.Handle(u))
									}
								}
							}
						}
					case listRelations:
						if f&store.FieldRelations != 0 {
							for _, rel := range l.span(pQualifiedRelation, pt.node) {
								add(store.Handle(l.get(pText, l.get(pTarget, rel))))
							}
						}
					case listRedirects:
						p.lists = append(p.lists, redirects...)
					}
					// Each list sorted and without repeats.
					s := p.lists[listStart:]
					slices.Sort(s)
					p.lists = p.lists[:listStart+len(slices.Compact(s))]
					p.off = append(p.off, int32(len(p.lists)))
				}
				if related && f&store.FieldRelations != 0 {
					flags[i] |= fRelated
				}
				if f&store.FieldEvidence != 0 {
					evStart := len(p.ev)
					for _, rt := range l.span(pRetrievedIn, pt.node) {
						if e, ok := g.evItem(rt); ok {
							p.ev = append(p.ev, e)
						}
					}
					slices.SortFunc(p.ev[evStart:], store.CompareEvidence)
				}
				p.evOff = append(p.evOff, int32(len(p.ev)))
			}
		})
	}
	// hand gives the caller the rows of the chunk made into c.
	hand := func(c *chunk, base int) error {
		raw, key, flags, parts := c.raw, c.key, c.flags, c.parts
		m := min(rowChunk, n-base)
		for w := range nw {
			p := &parts[w]
			lo := m * w / nw
			for k := range len(p.evOff) - 1 {
				if k%4096 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				i := lo + k
				list := func(j int) []store.Handle {
					return p.lists[p.off[k*numLists+j]:p.off[k*numLists+j+1]]
				}
				row = store.Row{
					ID: l.names.at(g.parts[base+i].id), Raw: raw[i], Key: key[i],
					Content: list(listContent), FinalURL: list(listFinalURL), Canonical: list(listCanonical),
					Relations: list(listRelations), Redirects: list(listRedirects),
					Rejected: flags[i]&fRejected != 0, KeyContent: flags[i]&fKeyContent != 0, Related: flags[i]&fRelated != 0,
					Evidence: p.ev[p.evOff[k]:p.evOff[k+1]],
				}
				if err := fn(&row); err != nil {
					return err
				}
			}
		}
		return nil
	}
	makeChunk(&bufs[0], 0)
	for c, base := 0, 0; base < n; c, base = 1-c, base+rowChunk {
		var next chan struct{}
		if base+rowChunk < n {
			next = make(chan struct{})
			go func() {
				defer close(next)
				makeChunk(&bufs[1-c], base+rowChunk)
			}()
		}
		err := hand(&bufs[c], base)
		if next != nil {
			<-next
		}
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// rowChunk is how many rows scan.rows makes before handing them over.
// Tests lower it so that a small database is read in several chunks.
var rowChunk = 1 << 16

// evItem is the store.Evidence of retrieval rt, false if rt is not
// successful (model.Successful, with the soft error of its current
// extraction, the greatest by model.CompareExtractions).
func (g *gathered) evItem(rt graph.ID) (store.Evidence, bool) {
	l := g.l
	var cur *store.Extraction
	var curEv graph.ID
	for _, x := range g.extsOf[rt] {
		ev := g.evOf[x]
		if ev == 0 {
			continue
		}
		e := &store.Extraction{Extractor: l.one(pExtractor, ev), TextDigest: l.one(pTextDigest, ev), SimHash: l.one(pSimHash, ev), SoftError: l.one(pSoftError, ev)}
		if cur == nil || cmpExtraction(e, cur) > 0 {
			cur, curEv = e, ev
		}
	}
	soft := ""
	if cur != nil {
		soft = cur.SoftError
	}
	if !model.Successful(l.one(pOutcome, rt), l.one(pFinalStatus, rt), soft) {
		return store.Evidence{}, false
	}
	it := store.Evidence{Retrieval: store.Handle(rt)}
	if h := l.get(pContentHash, rt); l.names.at(h) != "" {
		it.Content = store.Handle(h)
	}
	if cur != nil {
		if d := l.get(pTextDigest, curEv); l.names.at(d) != "" {
			it.Digest = store.Handle(d)
		}
		if cur.SimHash != "" {
			if v, err := strconv.ParseUint(cur.SimHash, 16, 64); err == nil {
				it.SimHash, it.HasSim = v, true
			}
		}
	}
	return it, true
}
