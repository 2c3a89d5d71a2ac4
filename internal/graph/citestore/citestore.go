// Package citestore is the bbolt backend of internal/store: the citation
// model over the quad store of internal/graph, as PROV-O quads in the
// shapes its Mapper writes (see ontology/MODEL.md). It answers
// store.Lookup by index lookups on the graph's (predicate, object) and
// (subject, predicate) indexes, by term id on one read transaction per
// question, and store.Appender with one graph.Store.Add
// per batch, which is one bbolt transaction: atomic, idempotent, exact.
//
// It is the one reader of the RDF model on the read side: store.Scanner
// and store.Catalog by term id (load.go: one pass over the SPO index into
// arrays, the whole-database loader the queries use; scan.go), and
// Reader, the same model read node by node for one citation's lineage.
// Both build a citation's parts with the same functions (build.go).
//
// It lives under internal/graph so that the quad store's id-level fast
// paths can stay behind store's interfaces as the queries move onto them,
// while internal/graph itself stays free of the citation model. It owns
// the mapping of a record to quads (Mapper, Mint, DetectRelations), which
// internal/ingest imports for the write paths store cannot express yet;
// so citestore must not import internal/ingest, nor internal/query or
// internal/export. It imports internal/graph, internal/model,
// internal/normalize, internal/store, internal/vocab and internal/cores
// (work split over cores), and not bbolt; only internal/graph does.
package citestore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Store is a store.Backend over an open graph.Store. It does not own the
// graph store: closing it is the caller's.
type Store struct {
	g *graph.Store
	// r, when set, is the read transaction every read runs on
	// (Within, View); rd is its Reader, made on first use
	// and kept, with what it read, for the view's next read.
	r  *graph.Reader
	rd *Reader
	// maps are the view maps opened on r, by policy digest and sub, to be
	// read again: opening a map of runs reads its list of runs, which a
	// lineage from the view did for each of its dozens of postings.
	maps map[string]viewMap
	// passMapped, when positive, is the mapped pages of the file the
	// view's reads keep (KeepMappedUnder).
	passMapped int64
	passReads  int // reads since the last look at the mapped pages
}

var _ store.Backend = (*Store)(nil)

// New returns the backend over g.
func New(g *graph.Store) *Store { return &Store{g: g} }

// Within returns the backend reading on the read transaction of r, for a
// caller already inside one: every read (lookups, Catalog, Scan) runs on
// r. A read transaction opened inside another deadlocks with a writer
// that must grow the file's mapping: the writer waits for the outer one
// to end, and the inner one waits behind the writer. provgraph serve hung
// so during an ingest at a million citations. View is the same for a
// caller that holds no transaction.
func (s *Store) Within(r *graph.Reader) *Store { return &Store{g: s.g, r: r} }

func iri(s string) graph.Term { return graph.IRI(s) }

// Digest implements store.Lookup.
func (s *Store) Digest(ctx context.Context, id string) (string, bool, error) {
	if err := ctx.Err(); err != nil {
		return "", false, err
	}
	ds, err := s.g.Objects(Mint("citation", id), iri(vocab.RecordDigest))
	if err != nil || len(ds) == 0 {
		return "", false, err
	}
	for _, d := range ds[1:] {
		if d.Value != ds[0].Value {
			return "", false, &store.ConflictError{CitationID: id, Where: "the database"}
		}
	}
	return ds[0].Value, true, nil
}

// ByRaw implements store.Lookup: the raw URL nodes whose pg:text is raw,
// then the citations that pg:cites them.
func (s *Store) ByRaw(ctx context.Context, raw string) (ids []string, err error) {
	err = s.read(ctx, func(x *idLookup) {
		nodes := x.typed(x.subjects(vocab.Text, x.id(graph.String(raw))), vocab.RawURL)
		ids = x.citing(vocab.Cites, nodes)
	})
	return ids, err
}

// ByKey implements store.Lookup: the comparison keys whose pg:text is key,
// the normalizations that generated them under the policy (its
// association, which every normalization under it points at), then the
// citations normalized as those. It reads node by node with the Reader
// (view.go): a lineage reads every citation it names next, and in a view
// the nodes read here (the key, the normalization, the citation) are not
// read again.
func (s *Store) ByKey(ctx context.Context, policyDigest, key string) (ids []string, err error) {
	assoc := Mint("association", policyDigest).Value
	err = s.reading(ctx, func(r *Reader) error {
		keys, err := r.Subjects(vocab.Text, graph.String(key))
		if err != nil {
			return err
		}
		var norms []string
		for _, k := range keys {
			if err := r.Node(k); err != nil {
				return err
			}
			if !r.Is(k, vocab.ComparisonKey) {
				continue
			}
			for _, n := range r.All(vocab.ProvWasGeneratedBy, k) {
				if err := r.Node(n); err != nil {
					return err
				}
				if slices.Contains(r.All(vocab.ProvQualifiedAssociation, n), assoc) {
					norms = append(norms, n)
				}
			}
		}
		for _, n := range norms {
			// Its links: the citations normalized as it and the key it
			// generated, which reading them next asks for.
			if err := r.readIn(n); err != nil {
				return err
			}
			cs, err := r.Subjects(vocab.NormalizedAs, graph.IRI(n))
			if err != nil {
				return err
			}
			if ids, err = r.appendIDs(ids, cs); err != nil {
				return err
			}
		}
		return nil
	})
	return sorted(ids), err
}

// ByContent implements store.Lookup: the retrievals with that
// pg:contentHash, then the citations retrieved in them (node by node, as
// ByKey).
func (s *Store) ByContent(ctx context.Context, hash string) (ids []string, err error) {
	err = s.reading(ctx, func(r *Reader) error {
		rts, err := r.Subjects(vocab.ContentHash, graph.String(hash))
		if err != nil {
			return err
		}
		for _, rt := range rts {
			if ids, err = r.appendRetrievedIn(ids, rt); err != nil {
				return err
			}
		}
		return nil
	})
	return sorted(ids), err
}

// Policies implements store.Lookup.
func (s *Store) Policies(ctx context.Context) ([]model.PolicyRef, error) {
	nodes, err := s.g.Subjects(iri(vocab.RDFType), iri(vocab.NormalizationPolicy))
	if err != nil {
		return nil, err
	}
	var out []model.PolicyRef
	for _, n := range nodes {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var p model.PolicyRef
		for _, f := range []struct {
			pred string
			dst  *string
		}{{vocab.PolicyName, &p.Name}, {vocab.PolicyVersion, &p.Version}, {vocab.PolicyDigest, &p.Digest}} {
			vs, err := s.g.Objects(n, iri(f.pred))
			if err != nil {
				return nil, err
			}
			if len(vs) > 0 {
				*f.dst = vs[0].Value
			}
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b model.PolicyRef) int { return compare(a.Digest, b.Digest) })
	return out, nil
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Append implements store.Appender. The policy's description and every
// new record's quads go to the quad store in one Add, one bbolt
// transaction. It writes no run: the run that appends is its caller's.
func (s *Store) Append(ctx context.Context, b store.Batch) (int, error) {
	if b.Policy == nil {
		return 0, fmt.Errorf("append: no policy")
	}
	m, err := NewMapper(b.Policy)
	if err != nil {
		return 0, fmt.Errorf("append: %w", err)
	}
	quads := slices.Clone(m.PolicyQuads())
	seen := map[string]string{}
	var cits []Citation
	added := 0
	for _, r := range b.Records {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		id, digest := r.ID(), r.Digest()
		if d, ok := seen[id]; ok {
			if d != digest {
				return 0, &store.ConflictError{CitationID: id, Where: "the batch"}
			}
			continue
		}
		seen[id] = digest
		stored, ok, err := s.Digest(ctx, id)
		if err != nil {
			return 0, fmt.Errorf("append: %w", err)
		}
		if ok && stored != digest {
			return 0, &store.ConflictError{CitationID: id, Where: "the database"}
		}
		if ok {
			continue
		}
		var info Citation
		if quads, info, err = m.Quads(quads, r); err != nil {
			return 0, fmt.Errorf("append: citation %s: %w", id, err)
		}
		cits = append(cits, info)
		added++
	}
	// A new database gets a view of the policy from its first batch.
	n, err := s.g.Count()
	if err != nil {
		return 0, fmt.Errorf("append: %w", err)
	}
	_, err = s.g.AddWith(quads, func(w *graph.Writer) error {
		if n == 0 {
			if err := StartView(w, b.Policy.Digest(), time.Now()); err != nil {
				return err
			}
		}
		return WriteNewViewRows(ctx, w, b.Policy.Digest(), cits)
	})
	if err != nil {
		return 0, fmt.Errorf("append: %w", err)
	}
	return added, nil
}
