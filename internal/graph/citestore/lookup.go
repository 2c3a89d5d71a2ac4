package citestore

import (
	"context"
	"slices"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

// idLookup answers Lookup's questions on one read transaction at term-id
// level: index scans by id and no term decoded but the citation ids of the
// answer. A lineage asks a few of them for every key of a neighbourhood,
// and a transaction (with its term cache) per step cost as much as the
// lookups themselves.
type idLookup struct {
	ctx context.Context
	r   *graph.Reader
	err error
	// rd, in a view, is the view's Reader: the lookups share its term
	// ids, and note the node of each citation id they meet, so that
	// Citations reads the citations they name without looking their ids
	// up again.
	rd *Reader
}

// read runs fn with an idLookup on one read transaction.
func (s *Store) read(ctx context.Context, fn func(*idLookup)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var x *idLookup
	if s.r != nil {
		x = &idLookup{ctx: ctx, r: s.r, rd: s.viewReader(ctx)}
		fn(x)
		return x.err
	}
	err := s.g.Read(func(r *graph.Reader) error {
		x = &idLookup{ctx: ctx, r: r}
		fn(x)
		return nil
	})
	if err != nil {
		return err
	}
	return x.err
}

func (x *idLookup) id(t graph.Term) graph.ID {
	if x.rd != nil {
		return x.rd.termID(t)
	}
	return x.r.ID(t)
}

// subjects returns the distinct subjects of (?, p, o), sorted.
func (x *idLookup) subjects(p string, o graph.ID) []graph.ID {
	if x.err != nil {
		return nil
	}
	var out []graph.ID
	x.err = x.r.Subjects(x.ctx, x.id(iri(p)), o, func(s graph.ID) { out = append(out, s) })
	slices.Sort(out)
	return slices.Compact(out)
}

// objects returns the objects of (s, p).
func (x *idLookup) objects(s graph.ID, p string) []graph.ID {
	if x.err != nil {
		return nil
	}
	var out []graph.ID
	x.err = x.r.Objects(x.ctx, s, x.id(iri(p)), func(o graph.ID) { out = append(out, o) })
	return out
}

// has reports whether (s, p, o) is stored, in any graph.
func (x *idLookup) has(s graph.ID, p string, o graph.ID) bool {
	return o != 0 && slices.Contains(x.objects(s, p), o)
}

// typed returns the nodes of ns that are of class.
func (x *idLookup) typed(ns []graph.ID, class string) []graph.ID {
	c := x.id(iri(class))
	out := ns[:0]
	for _, n := range ns {
		if x.has(n, vocab.RDFType, c) {
			out = append(out, n)
		}
	}
	return out
}

// citing returns the sorted, distinct citation ids of the subjects of
// (?, p, o) for each o of objs.
func (x *idLookup) citing(p string, objs []graph.ID) []string {
	var ids []string
	for _, o := range objs {
		for _, c := range x.subjects(p, o) {
			if x.err == nil {
				x.err = x.ctx.Err()
			}
			for _, v := range x.objects(c, vocab.CitationId) {
				if x.err != nil {
					return nil
				}
				var t graph.Term
				if t, x.err = x.r.Term(v); x.err != nil {
					return nil
				}
				ids = append(ids, t.Value)
				if x.rd != nil {
					x.err = x.rd.noteCitation(t.Value, c)
				}
			}
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}
