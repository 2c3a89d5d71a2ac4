package citestore

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Scan implements store.Scanner on one read transaction, reading each
// citation's nodes by index lookups and interning the texts per field
// (store.Dict). fn runs inside the transaction: it must not Append to the
// same store.
//
// This is the reference form of the scan, not the fast one: grouping a
// million citations still goes through internal/query's loader (one pass
// over the SPO index, term ids as handles), which is to move here behind
// this method. On a million synthetic citations this form takes 131 s for
// the grouping fields, where the whole groups command takes 4.4 s.
func (s *Store) Scan(ctx context.Context, policyDigest string, f store.Fields, fn func(*store.Row) error) (store.Texts, error) {
	d := &store.Dict{}
	var inner error
	err := s.g.Read(func(r *graph.Reader) error {
		sc := scanner{ctx: ctx, r: r, d: d, f: f, assoc: iri(model.Mint("association", policyDigest))}
		inner = sc.run(fn)
		return nil
	})
	if err == nil {
		err = inner
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

type scanner struct {
	ctx   context.Context
	r     *graph.Reader
	d     *store.Dict
	f     store.Fields
	assoc graph.Term
	err   error
}

// objs returns the objects of (n, p), or nil after the first error.
func (sc *scanner) objs(n graph.Term, p string) []graph.Term {
	return sc.match(graph.Quad{S: n, P: iri(p)}, func(q graph.Quad) graph.Term { return q.O })
}

// subs returns the subjects of (?, p, o).
func (sc *scanner) subs(p string, o graph.Term) []graph.Term {
	return sc.match(graph.Quad{P: iri(p), O: o}, func(q graph.Quad) graph.Term { return q.S })
}

func (sc *scanner) has(q graph.Quad) bool {
	return len(sc.match(q, func(q graph.Quad) graph.Term { return q.S })) > 0
}

func (sc *scanner) match(pattern graph.Quad, pick func(graph.Quad) graph.Term) []graph.Term {
	if sc.err != nil {
		return nil
	}
	var out []graph.Term
	sc.err = sc.r.Match(sc.ctx, pattern, func(q graph.Quad) error {
		out = append(out, pick(q))
		return nil
	})
	return out
}

// texts interns the values of the objects of (n, p) in field f, appending
// their handles to dst.
func (sc *scanner) texts(dst []store.Handle, f store.Fields, n graph.Term, p string) []store.Handle {
	for _, o := range sc.objs(n, p) {
		dst = append(dst, sc.d.Intern(f, o.Value))
	}
	return dst
}

func (sc *scanner) run(fn func(*store.Row) error) error {
	type cit struct {
		id   string
		node graph.Term
	}
	var cits []cit
	for _, n := range sc.subs(vocab.RDFType, iri(vocab.Citation)) {
		for _, id := range sc.objs(n, vocab.CitationId) {
			cits = append(cits, cit{id.Value, n})
		}
	}
	slices.SortFunc(cits, func(a, b cit) int { return strings.Compare(a.id, b.id) })
	var row store.Row
	for _, c := range cits {
		if sc.err != nil {
			return sc.err
		}
		row = store.Row{ID: c.id, Content: row.Content[:0], FinalURL: row.FinalURL[:0], Canonical: row.Canonical[:0], Relations: row.Relations[:0], Evidence: row.Evidence[:0], Redirects: row.Redirects[:0]}
		raws := sc.objs(c.node, vocab.Cites)
		if sc.f&store.FieldRaw != 0 {
			for _, raw := range raws {
				for _, h := range sc.texts(nil, store.FieldRaw, raw, vocab.Text) {
					row.Raw = h
				}
			}
		}
		if sc.f&store.FieldKey != 0 {
			for _, nrm := range sc.objs(c.node, vocab.NormalizedAs) {
				if !sc.has(graph.Quad{S: nrm, P: iri(vocab.ProvQualifiedAssociation), O: sc.assoc}) {
					continue
				}
				for _, code := range sc.objs(nrm, vocab.ErrorCode) {
					row.Rejected = row.Rejected || code.Value != ""
				}
				for _, k := range sc.subs(vocab.ProvWasGeneratedBy, nrm) {
					if sc.has(graph.Quad{S: k, P: iri(vocab.RDFType), O: iri(vocab.ComparisonKey)}) {
						for _, h := range sc.texts(nil, store.FieldKey, k, vocab.Text) {
							row.Key = h
						}
						row.KeyContent = sc.value(k, vocab.Compare) == string(normalize.CompareContent)
					}
				}
			}
		}
		if sc.f&(store.FieldContent|store.FieldFinalURL|store.FieldCanonical|store.FieldEvidence|store.FieldRelations) != 0 {
			for _, ret := range sc.objs(c.node, vocab.RetrievedIn) {
				if sc.f&(store.FieldFinalURL|store.FieldRelations) != 0 {
					sc.redirect(&row, ret)
				}
				if sc.f&store.FieldRelations != 0 {
					for _, decl := range sc.subs(vocab.ProvWasGeneratedBy, ret) {
						row.Related = row.Related || sc.has(graph.Quad{S: decl, P: iri(vocab.RDFType), O: iri(vocab.CanonicalDeclaration)})
					}
				}
				if sc.f&store.FieldEvidence != 0 {
					if ev, ok := sc.evidence(ret); ok {
						row.Evidence = append(row.Evidence, ev)
					}
				}
				if sc.f&store.FieldContent != 0 {
					row.Content = sc.texts(row.Content, store.FieldContent, ret, vocab.ContentHash)
				}
				if sc.f&store.FieldFinalURL != 0 {
					row.FinalURL = sc.texts(row.FinalURL, store.FieldFinalURL, ret, vocab.FinalURL)
				}
				if sc.f&store.FieldCanonical != 0 {
					for _, decl := range sc.subs(vocab.ProvWasGeneratedBy, ret) {
						if sc.has(graph.Quad{S: decl, P: iri(vocab.RDFType), O: iri(vocab.CanonicalDeclaration)}) {
							row.Canonical = sc.texts(row.Canonical, store.FieldCanonical, decl, vocab.DeclaredURL)
						}
					}
				}
			}
		}
		if sc.f&store.FieldRelations != 0 {
			rels := sc.objs(c.node, vocab.QualifiedRelation)
			row.Related = row.Related || len(rels) > 0
			for _, rel := range rels {
				for _, t := range sc.objs(rel, vocab.Target) {
					row.Relations = sc.texts(row.Relations, store.FieldRelations, t, vocab.Text)
				}
			}

		}
		if sc.err != nil {
			return sc.err
		}
		for _, hs := range []*[]store.Handle{&row.Content, &row.FinalURL, &row.Canonical, &row.Relations, &row.Redirects} {
			slices.Sort(*hs)
			*hs = slices.Compact(*hs)
		}
		slices.SortFunc(row.Evidence, store.CompareEvidence)
		if err := fn(&row); err != nil {
			return err
		}
	}
	return sc.err
}

// value is the first value of (n, p), "" for none.
func (sc *scanner) value(n graph.Term, p string) string {
	for _, o := range sc.objs(n, p) {
		return o.Value
	}
	return ""
}

// evidence is the store.Evidence of retrieval ret, false if ret is not
// successful: its current extraction is the greatest of the evidence its
// extractions generated (model.CompareExtractions).
func (sc *scanner) evidence(ret graph.Term) (store.Evidence, bool) {
	var cur *model.Extraction
	for _, x := range sc.subs(vocab.OfRetrieval, ret) {
		for _, ev := range sc.subs(vocab.ProvWasGeneratedBy, x) {
			if !sc.has(graph.Quad{S: ev, P: iri(vocab.RDFType), O: iri(vocab.ExtractedEvidence)}) {
				continue
			}
			e := &model.Extraction{Extractor: sc.value(ev, vocab.Extractor), TextDigest: sc.value(ev, vocab.TextDigest),
				SimHash: sc.value(ev, vocab.SimHash), SoftError: sc.value(ev, vocab.SoftError)}
			if cur == nil || model.CompareExtractions(e, cur) > 0 {
				cur = e
			}
		}
	}
	soft := ""
	if cur != nil {
		soft = cur.SoftError
	}
	if !model.Successful(sc.value(ret, vocab.Outcome), sc.value(ret, vocab.FinalStatus), soft) {
		return store.Evidence{}, false
	}
	ev := store.Evidence{Retrieval: sc.d.Intern(store.FieldRetrieval, ret.Value)}
	if h := sc.value(ret, vocab.ContentHash); h != "" {
		ev.Content = sc.d.Intern(store.FieldContent, h)
	}
	if cur != nil {
		if cur.TextDigest != "" {
			ev.Digest = sc.d.Intern(store.FieldEvidence, cur.TextDigest)
		}
		if cur.SimHash != "" {
			if v, err := strconv.ParseUint(cur.SimHash, 16, 64); err == nil {
				ev.SimHash, ev.HasSim = v, true
			}
		}
	}
	return ev, true
}

// redirect adds to row what retrieval ret's redirects say: with
// FieldRelations, that the citation is related; with FieldFinalURL, the
// final URL when no hop crossed hosts (the pg:crossesHost the mapping
// stored).
func (sc *scanner) redirect(row *store.Row, ret graph.Term) {
	final := sc.value(ret, vocab.FinalURL)
	hops := sc.objs(ret, vocab.Hop)
	if final == "" || len(hops) == 0 {
		return
	}
	if sc.f&store.FieldRelations != 0 {
		row.Related = true
	}
	if sc.f&store.FieldFinalURL == 0 {
		return
	}
	for _, h := range hops {
		if sc.value(h, vocab.CrossesHost) == "true" {
			return
		}
	}
	row.Redirects = append(row.Redirects, sc.d.Intern(store.FieldFinalURL, final))
}
