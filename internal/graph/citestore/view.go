package citestore

import (
	"context"
	"slices"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// This file answers a lineage's reads: whole citations by id and the
// lookups of its neighbourhood that follow the model's links (a text
// digest to its citations, a final URL to its retrievals' citations), with
// Reader, node by node. Inside View they share one read transaction and
// one Reader, so that a node read for one citation is not read again for
// the next.

// View implements store.Viewer: fn reads on one read transaction.
func (s *Store) View(ctx context.Context, fn func(store.Reader) error) error {
	if s.r != nil {
		return fn(s)
	}
	// fn's own error is returned as it is, not as a failed read.
	var inner error
	err := s.g.Read(func(r *graph.Reader) error {
		inner = fn(s.Within(r))
		return nil
	})
	if err != nil {
		return err
	}
	return inner
}

// Forget lets go of what the reads of a view (View, Within) kept: the
// nodes, terms and citations read, which later reads on the view would
// otherwise take again; and it gives back the pages of the file mapped
// past the store's mapped limit. A pass over the whole database on one
// view (the full listing of groups from a grouping view) calls it
// between batches, so that its memory does not grow with the database.
// Outside a view it does nothing.
func (s *Store) Forget() {
	if s.rd != nil {
		s.rd.reset()
	}
	if s.r != nil {
		s.r.LimitMapped(s.passMapped)
	}
}

// KeepMappedUnder has the reads of a view (View, Within) keep at most
// about limit bytes of the file mapped: Citations looks every
// passLookEvery citations it reads, and Forget gives back what is past
// it. The filters of the runs are spared up to three quarters of limit
// (graph.Reader.LimitMapped): every lookup reads them. A pass over the
// whole database reading citation after citation at random would
// otherwise map the whole file (1.3 GB of resident memory at a million
// citations).
func (s *Store) KeepMappedUnder(limit int64) { s.passMapped = limit }

// passLookEvery is how many reads (a citation, a lookup in the grouping
// view) pass between two looks at the mapped pages when KeepMappedUnder
// is set: a read maps a few dozen pages at most (Linux maps up to 16
// around each fault).
const passLookEvery = 64

// LookMapped keeps the mapped pages under KeepMappedUnder's limit now,
// as passRead does every passLookEvery reads: for a caller each of whose
// reads maps many pages (a page of thousands of rows read in order,
// which between two of passRead's looks mapped 964 MB against a limit of
// 512 MiB at ten million citations).
func (s *Store) LookMapped() {
	if s.passMapped > 0 && s.r != nil {
		s.r.LimitMapped(s.passMapped)
	}
}

// passRead counts a read, and every passLookEvery keeps the mapped pages
// under KeepMappedUnder's limit.
func (s *Store) passRead() {
	if s.passMapped <= 0 || s.r == nil {
		return
	}
	if s.passReads++; s.passReads >= passLookEvery {
		s.passReads = 0
		s.r.LimitMapped(s.passMapped)
	}
}

// reading runs fn with a Reader: the view's own, kept for the next call,
// or one on a transaction of its own.
func (s *Store) reading(ctx context.Context, fn func(*Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.r != nil {
		return s.viewReader(ctx).run(fn)
	}
	return s.g.Read(func(r *graph.Reader) error { return NewReader(ctx, r).run(fn) })
}

// run calls fn with r, and returns r.err (a term One or All could not
// decode) if fn returns no error.
func (r *Reader) run(fn func(*Reader) error) error {
	if err := fn(r); err != nil {
		return err
	}
	return r.err
}

// viewReader returns the view's Reader, made on first use.
func (s *Store) viewReader(ctx context.Context) *Reader {
	if s.rd == nil {
		s.rd = NewReader(ctx, s.r)
	}
	s.rd.ctx = ctx
	return s.rd
}

// Citations implements store.Lookup.
func (s *Store) Citations(ctx context.Context, policyDigest string, ids []string) ([]*store.Citation, error) {
	return s.citations(ctx, policyDigest, ids, (*Reader).Citation)
}

// Members returns the citations with the given ids as Citations does, but
// each lean, with only what the group of a lineage needs of its other
// members (Reader.Member): a lineage reads its neighbourhood with it.
func (s *Store) Members(ctx context.Context, policyDigest string, ids []string) ([]*store.Citation, error) {
	return s.citations(ctx, policyDigest, ids, (*Reader).Member)
}

// Shown returns the citations with the given ids as a listed group shows
// them (Reader.Shown): what the full listing of groups from a grouping
// view reads of every member.
func (s *Store) Shown(ctx context.Context, policyDigest string, ids []string) ([]*store.Citation, error) {
	return s.citations(ctx, policyDigest, ids, (*Reader).Shown)
}

// citations reads the citations with the given ids with read.
func (s *Store) citations(ctx context.Context, policyDigest string, ids []string, read func(*Reader, string, store.PolicyRef) (*store.Citation, error)) ([]*store.Citation, error) {
	out := make([]*store.Citation, len(ids))
	err := s.reading(ctx, func(r *Reader) error {
		pols, err := r.policiesOnce()
		if err != nil {
			return err
		}
		var pol store.PolicyRef
		for _, p := range pols {
			if p.Digest == policyDigest {
				pol = p
			}
		}
		for i, id := range ids {
			s.passRead()
			n, err := r.citationNode(id)
			if err != nil {
				return err
			}
			if n == "" {
				continue
			}
			if out[i], err = read(r, n, pol); err != nil {
				return err
			}
			out[i].Under = r.Under(n)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ByTextDigest implements store.Lookup: the evidence with the digest,
// the extraction that generated it, the retrieval it is of, and the
// citations retrieved in that.
func (s *Store) ByTextDigest(ctx context.Context, digest string) ([]string, error) {
	var ids []string
	err := s.reading(ctx, func(r *Reader) error {
		evs, err := r.Subjects(vocab.TextDigest, graph.String(digest))
		if err != nil {
			return err
		}
		for _, ev := range evs {
			if err := r.Node(ev); err != nil {
				return err
			}
			x := r.One(vocab.ProvWasGeneratedBy, ev)
			if err := r.Node(x); err != nil {
				return err
			}
			if rt := r.One(vocab.OfRetrieval, x); rt != "" {
				if ids, err = r.appendRetrievedIn(ids, rt); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return sorted(ids), err
}

// ByFinalURL implements store.Lookup: the resolved URL node with the text,
// each retrieval resolved to it, and the citations retrieved in that.
func (s *Store) ByFinalURL(ctx context.Context, url string, fn func(ids []string) bool) error {
	return s.reading(ctx, func(r *Reader) error {
		nodes, err := r.Subjects(vocab.Text, graph.String(url))
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if err := r.Node(n); err != nil {
				return err
			}
			if !r.Is(n, vocab.ResolvedURL) {
				continue
			}
			rts, err := r.Subjects(vocab.ResolvedTo, graph.IRI(n))
			if err != nil {
				return err
			}
			for _, rt := range rts {
				ids, err := r.appendRetrievedIn(nil, rt)
				if err != nil {
					return err
				}
				if !fn(sorted(ids)) {
					return nil
				}
			}
		}
		return nil
	})
}

// ByRelationTarget implements store.Lookup: the related resource with the
// text, the qualified relations whose target it is, and their citations.
func (s *Store) ByRelationTarget(ctx context.Context, target string) ([]string, error) {
	var ids []string
	err := s.reading(ctx, func(r *Reader) error {
		nodes, err := r.Subjects(vocab.Text, graph.String(target))
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if err := r.Node(n); err != nil {
				return err
			}
			if !r.Is(n, vocab.RelatedResource) {
				continue
			}
			rels, err := r.Subjects(vocab.Target, graph.IRI(n))
			if err != nil {
				return err
			}
			for _, rel := range rels {
				cs, err := r.Subjects(vocab.QualifiedRelation, graph.IRI(rel))
				if err != nil {
					return err
				}
				if ids, err = r.appendIDs(ids, cs); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return sorted(ids), err
}

// sorted sorts ids and drops repeats; nil for none.
func sorted(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// appendRetrievedIn appends the ids of the citations retrieved in rt.
func (r *Reader) appendRetrievedIn(ids []string, rt string) ([]string, error) {
	if err := r.readIn(rt); err != nil {
		return nil, err
	}
	cs, err := r.Subjects(vocab.RetrievedIn, graph.IRI(rt))
	if err != nil {
		return nil, err
	}
	return r.appendIDs(ids, cs)
}

// appendIDs appends the citation ids of the citation nodes cs.
func (r *Reader) appendIDs(ids, cs []string) ([]string, error) {
	for _, c := range cs {
		if err := r.Node(c); err != nil {
			return nil, err
		}
		for _, id := range r.All(vocab.CitationId, c) {
			ids = append(ids, id)
			if _, ok := r.nodeOf[id]; !ok {
				r.nodeOf[id] = c
			}
		}
	}
	return ids, nil
}

// noteCitation notes that the citation with the id has the node whose
// term id is node (found by an id-level lookup), unless one is noted.
func (r *Reader) noteCitation(id string, node graph.ID) error {
	if _, ok := r.nodeOf[id]; ok {
		return nil
	}
	t, err := r.term(node)
	if err != nil {
		return err
	}
	if t.Kind == graph.KindIRI {
		r.nodeOf[id] = t.Value
	}
	return nil
}

// citationNode returns the node of the citation with the id, "" if none.
//
// The node ingest mints from the id (Mapper) is tried first: reading it
// is one range of SPO, which the citation's read needs next anyway, while
// finding the subjects of the id's literal is a POS lookup that probes the
// filter of every POS run, a random page of the file each (at ten million
// citations, half the CPU of a lineage command of a large group went into
// faulting those pages in). A citation loaded from RDF under another node
// is found by the lookup still. Should two nodes hold the same id, the
// minted one is the citation's node.
func (r *Reader) citationNode(id string) (string, error) {
	if n, ok := r.nodeOf[id]; ok {
		return n, nil
	}
	minted := Mint("citation", id).Value
	if err := r.Node(minted); err != nil {
		return "", err
	}
	want := graph.String(id)
	fs, p := r.objects(vocab.CitationId, minted)
	for _, po := range fs {
		if po[0] != p {
			break
		}
		t, err := r.term(po[1])
		if err != nil {
			return "", err
		}
		if t == want {
			r.nodeOf[id] = minted
			return minted, nil
		}
	}
	ns, err := r.Subjects(vocab.CitationId, graph.String(id))
	if err != nil {
		return "", err
	}
	n := ""
	if len(ns) > 0 {
		n = ns[0]
	}
	r.nodeOf[id] = n
	return n, nil
}

// policiesOnce returns Policies, read once per Reader.
func (r *Reader) policiesOnce() ([]store.PolicyRef, error) {
	if r.polList == nil {
		pols, err := r.Policies()
		if err != nil {
			return nil, err
		}
		r.polList = append([]store.PolicyRef{}, pols...)
	}
	return r.polList, nil
}
