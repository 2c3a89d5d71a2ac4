package citestore

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/provgraph/provgraph/internal/cores"
	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// pred numbers the predicates the loader reads.
type pred int

const (
	pAnswerId pred = iota
	pAt
	pBaseURL
	pCapturedAt
	pCitationId
	pCites
	pCompare
	pContentHash
	pContentType
	pCrossesHost
	pDeclaredURL
	pEngineName
	pErrorCode
	pErrorMessage
	pEvidence
	pFinalStatus
	pFinalURL
	pFormat
	pFragment
	pFrom
	pHop
	pHopIndex
	pHostRule
	pInAnswer
	pLocation
	pNormalizedAs
	pObservedAt
	pOutcome
	pOutcomeError
	pParsed
	pPosition
	pProvHadPlan
	pProvQualifiedAssociation
	pProvWasAttributedTo
	pProvWasGeneratedBy
	pQualifiedRelation
	pQuestion
	pRemovedParams
	pRetrievedAt
	pRetrievedIn
	pSignalSource
	pSnapshotRef
	pCanonicalDropped
	pStatus
	pSteps
	pTarget
	pText
	pTo
	pCaptureRef
	pCheckOf
	pCheckedAgainst
	pDatesDisagree
	pDeclaredDates
	pExtractor
	pExtractionMethod
	pExtractionProblem
	pFromResponse
	pLanguage
	pMediaType
	pOfRetrieval
	pOgTitle
	pPassageFound
	pPassageMethod
	pPassageScore
	pSimHash
	pSoftError
	pSpanEnd
	pSpanStart
	pTextDigest
	pTitle
	pWordCount
	numPreds
)

var predIRIs = [numPreds]string{
	pAnswerId:                 vocab.AnswerId,
	pAt:                       vocab.At,
	pBaseURL:                  vocab.BaseURL,
	pCapturedAt:               vocab.CapturedAt,
	pCitationId:               vocab.CitationId,
	pCites:                    vocab.Cites,
	pCompare:                  vocab.Compare,
	pContentHash:              vocab.ContentHash,
	pContentType:              vocab.ContentType,
	pCrossesHost:              vocab.CrossesHost,
	pDeclaredURL:              vocab.DeclaredURL,
	pEngineName:               vocab.EngineName,
	pErrorCode:                vocab.ErrorCode,
	pErrorMessage:             vocab.ErrorMessage,
	pEvidence:                 vocab.Evidence,
	pFinalStatus:              vocab.FinalStatus,
	pFinalURL:                 vocab.FinalURL,
	pFormat:                   vocab.Format,
	pFragment:                 vocab.Fragment,
	pFrom:                     vocab.From,
	pHop:                      vocab.Hop,
	pHopIndex:                 vocab.HopIndex,
	pHostRule:                 vocab.HostRule,
	pInAnswer:                 vocab.InAnswer,
	pLocation:                 vocab.Location,
	pNormalizedAs:             vocab.NormalizedAs,
	pObservedAt:               vocab.ObservedAt,
	pOutcome:                  vocab.Outcome,
	pOutcomeError:             vocab.OutcomeError,
	pParsed:                   vocab.Parsed,
	pPosition:                 vocab.Position,
	pProvHadPlan:              vocab.ProvHadPlan,
	pProvQualifiedAssociation: vocab.ProvQualifiedAssociation,
	pProvWasAttributedTo:      vocab.ProvWasAttributedTo,
	pProvWasGeneratedBy:       vocab.ProvWasGeneratedBy,
	pQualifiedRelation:        vocab.QualifiedRelation,
	pQuestion:                 vocab.Question,
	pRemovedParams:            vocab.RemovedParams,
	pRetrievedAt:              vocab.RetrievedAt,
	pRetrievedIn:              vocab.RetrievedIn,
	pSignalSource:             vocab.SignalSource,
	pSnapshotRef:              vocab.SnapshotRef,
	pCanonicalDropped:         vocab.CanonicalDropped,
	pStatus:                   vocab.Status,
	pSteps:                    vocab.Steps,
	pTarget:                   vocab.Target,
	pText:                     vocab.Text,
	pTo:                       vocab.To,
	pCaptureRef:               vocab.CaptureRef,
	pCheckOf:                  vocab.CheckOf,
	pCheckedAgainst:           vocab.CheckedAgainst,
	pDatesDisagree:            vocab.DatesDisagree,
	pDeclaredDates:            vocab.DeclaredDates,
	pExtractor:                vocab.Extractor,
	pExtractionMethod:         vocab.ExtractionMethod,
	pExtractionProblem:        vocab.ExtractionProblem,
	pFromResponse:             vocab.FromResponse,
	pLanguage:                 vocab.Language,
	pMediaType:                vocab.MediaType,
	pOfRetrieval:              vocab.OfRetrieval,
	pOgTitle:                  vocab.OgTitle,
	pPassageFound:             vocab.PassageFound,
	pPassageMethod:            vocab.PassageMethod,
	pPassageScore:             vocab.PassageScore,
	pSimHash:                  vocab.SimHash,
	pSoftError:                vocab.SoftError,
	pSpanEnd:                  vocab.SpanEnd,
	pSpanStart:                vocab.SpanStart,
	pTextDigest:               vocab.TextDigest,
	pTitle:                    vocab.Title,
	pWordCount:                vocab.WordCount,
}

// loader reads a whole snapshot by term id (graph.Reader). One ordered
// pass over the SPO index gathers, for every subject, the (predicate,
// object) pairs of the predicates the snapshot needs, into arrays indexed
// by id; the citations are assembled from those; and only then are the
// terms the snapshot shows decoded, in one ordered pass over the
// dictionary. Nothing is keyed by string and no map is probed per quad,
// which keeps a million-citation load to seconds.
type loader struct {
	ctx   context.Context
	r     *graph.Reader
	names terms    // decoded terms by id: IRI or lexical form
	marks []uint64 // a bit for every id to decode (want)
	// steps has a bit for every step log to decode (wantSteps): only the
	// rules it names are kept (terms.steps).
	steps idSet
	rels  map[graph.ID]string

	// The pairs of subject s are preds[off[s]:off[s+1]] and
	// objs[off[s]:off[s+1]], in predicate id order. A predicate is kept
	// as its pred number + 1, a byte, not its term id: the objects and
	// offsets are what the arrays must hold, and at a million citations
	// term ids made 29 MB more of them.
	off   []uint32
	preds []uint8
	objs  []graph.ID
	pid   [numPreds]graph.ID
}

// code is how pred is kept in loader.preds.
func (p pred) code() uint8 { return uint8(p) + 1 }

func newLoader(ctx context.Context, r *graph.Reader) *loader {
	return &loader{ctx: ctx, r: r, marks: make([]uint64, r.MaxID()/64+1), steps: newIDSet(r.MaxID())}
}

// read gathers the pairs of preds from every subject. The pass is split
// into subject ranges read on every core; each range fills its own arrays,
// which are then laid end to end.
func (l *loader) read(preds ...pred) error {
	max := l.r.MaxID()
	codeOf := make([]uint8, max+1) // predicate id -> pred.code(), 0 if not read
	for _, p := range preds {
		if id := l.r.ID(graph.IRI(predIRIs[p])); id != 0 {
			l.pid[p] = id
			codeOf[id] = p.code()
		}
	}
	l.off = make([]uint32, max+2)
	nw := cores.N()
	type part struct {
		preds []uint8
		objs  []graph.ID
	}
	parts := make([]part, nw)
	errs := make([]error, nw)
	cores.Split(nw, func(w, _, _ int) {
		from, to := 1+max*graph.ID(w)/graph.ID(nw), 1+max*graph.ID(w+1)/graph.ID(nw)
		pt := &parts[w]
		// Room for half of this range's quads: grouping reads about that
		// share, so the arrays rarely grow (and copy) on the way.
		guess := l.r.Count() / int64(nw) / 2
		pt.preds, pt.objs = make([]uint8, 0, guess), make([]graph.ID, 0, guess)
		next := from // the first subject whose start is not yet set
		seen := 0
		errs[w] = l.r.QuadsIn(l.ctx, from, to, func(s, p, o graph.ID) {
			if seen++; seen%releaseEvery == 0 {
				l.r.ReleaseMapped(mappedLimit)
			}
			c := codeOf[p]
			if c == 0 {
				return
			}
			for ; next <= s; next++ {
				l.off[next] = uint32(len(pt.preds))
			}
			pt.preds = append(pt.preds, c)
			pt.objs = append(pt.objs, o)
		})
		for ; next < to; next++ {
			l.off[next] = uint32(len(pt.preds))
		}
	})
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("citestore: reading the quads: %w", err)
	}
	total := 0
	for _, pt := range parts {
		total += len(pt.preds)
	}
	l.preds, l.objs = make([]uint8, 0, total), make([]graph.ID, 0, total)
	for w, pt := range parts {
		from, to := 1+max*graph.ID(w)/graph.ID(nw), 1+max*graph.ID(w+1)/graph.ID(nw)
		if base := uint32(len(l.preds)); base > 0 {
			for s := from; s < to; s++ {
				l.off[s] += base
			}
		}
		l.preds = append(l.preds, pt.preds...)
		l.objs = append(l.objs, pt.objs...)
	}
	l.off[max+1] = uint32(len(l.preds))
	return nil
}

// get returns the first object of pred for s, or 0.
func (l *loader) get(pr pred, s graph.ID) graph.ID {
	if s == 0 || int(s)+1 >= len(l.off) {
		return 0
	}
	if l.pid[pr] == 0 { // not read: a lean load leaves out what grouping never shows
		return 0
	}
	p := pr.code()
	for i := l.off[s]; i < l.off[s+1]; i++ {
		if l.preds[i] == p {
			return l.objs[i]
		}
	}
	return 0
}

// all returns the objects of pred for s.
func (l *loader) all(pr pred, s graph.ID) []graph.ID {
	if s == 0 || int(s)+1 >= len(l.off) {
		return nil
	}
	if l.pid[pr] == 0 {
		return nil
	}
	p := pr.code()
	var out []graph.ID
	for i := l.off[s]; i < l.off[s+1]; i++ {
		if l.preds[i] == p {
			out = append(out, l.objs[i])
		}
	}
	return out
}

// appendAll appends the objects of pred for s to dst.
func (l *loader) appendAll(dst []graph.ID, pr pred, s graph.ID) []graph.ID {
	if s == 0 || int(s)+1 >= len(l.off) || l.pid[pr] == 0 {
		return dst
	}
	p := pr.code()
	for i := l.off[s]; i < l.off[s+1]; i++ {
		if l.preds[i] == p {
			dst = append(dst, l.objs[i])
		}
	}
	return dst
}

// span returns the objects of pred for s, as all does, without copying
// them when they are contiguous in objs (a subject's pairs are in
// predicate id order, so they are): the caller must not change it.
func (l *loader) span(pr pred, s graph.ID) []graph.ID {
	if s == 0 || int(s)+1 >= len(l.off) || l.pid[pr] == 0 {
		return nil
	}
	p := pr.code()
	i, end := l.off[s], l.off[s+1]
	for i < end && l.preds[i] != p {
		i++
	}
	j := i
	for j < end && l.preds[j] == p {
		j++
	}
	for k := j; k < end; k++ {
		if l.preds[k] == p { // not contiguous after all: copy
			return l.all(pr, s)
		}
	}
	if i == j {
		return nil
	}
	return l.objs[i:j:j]
}

// instances returns the subjects of rdf:type class.
func (l *loader) instances(class string) ([]graph.ID, error) {
	var out []graph.ID
	typ, cls := l.r.ID(graph.IRI(vocab.RDFType)), l.r.ID(graph.IRI(class))
	if typ == 0 || cls == 0 {
		return nil, nil
	}
	err := l.r.Subjects(l.ctx, typ, cls, func(s graph.ID) { out = append(out, s) })
	l.r.ReleaseMapped(mappedLimit)
	if err != nil {
		return nil, fmt.Errorf("citestore: reading instances of %s: %w", class, err)
	}
	return out, nil
}

// want marks ids whose term the snapshot shows; decode reads them. It may
// be called on several goroutines at once.
func (l *loader) want(ids ...graph.ID) {
	for _, id := range ids {
		if id != 0 && int(id/64) < len(l.marks) {
			atomic.OrUint64(&l.marks[id/64], 1<<(id%64))
		}
	}
}

// wantSteps marks the step log of normalization nrm, to be decoded as
// the rules it names (stepLog).
func (l *loader) wantSteps(nrm graph.ID) {
	for _, o := range l.span(pSteps, nrm) {
		l.steps.add(o)
	}
}

// wantAll marks the objects of pred for s, as want.
func (l *loader) wantAll(pr pred, s graph.ID) {
	if s == 0 || int(s)+1 >= len(l.off) || l.pid[pr] == 0 {
		return
	}
	p := pr.code()
	for i := l.off[s]; i < l.off[s+1]; i++ {
		if l.preds[i] == p {
			l.want(l.objs[i])
		}
	}
}

func (l *loader) decode() error {
	// The wanted ids, in order, from the bitmap of marks, which becomes
	// the index of the decoded terms: decode runs once per loader.
	l.names = terms{set: idSet{bits: l.marks}, max: l.r.MaxID()}
	l.marks = nil
	n := l.names.set.seal()
	need := make([]graph.ID, 0, n)
	for w, word := range l.names.set.bits {
		for word != 0 {
			need = append(need, graph.ID(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	l.names.ent = make([]uint64, n)
	// Each core decodes its share of the ids, with a cursor of its own,
	// into large blocks of bytes (terms): millions of small strings would
	// each be an allocation, and an object for the garbage collector to
	// mark on every cycle. A core numbers its blocks from 0; they are
	// renumbered once all are laid end to end.
	nw := cores.N()
	errs := make([]error, nw)
	blocks := make([][][]byte, nw)
	cores.Split(len(need), func(w, lo, hi int) {
		if lo == hi {
			return
		}
		block := make([]byte, 0, decodeBlock)
		mine := [][]byte{nil}
		k := lo
		errs[w] = l.r.Values(l.ctx, need[lo:hi], func(id graph.ID, v []byte) error {
			if (k-lo)%(releaseEvery/16) == releaseEvery/16-1 {
				l.r.ReleaseMapped(mappedLimit)
			}
			if id != need[k] {
				return fmt.Errorf("citestore: decoding: term %d came for %d", id, need[k])
			}
			if len(v) > cap(block)-len(block) {
				mine[len(mine)-1] = block
				block = make([]byte, 0, decodeBlock+len(v))
				mine = append(mine, nil)
			}
			block = append(block, v...)
			l.names.ent[k] = uint64(len(mine)-1)<<32 | uint64(len(block))
			k++
			return nil
		})
		mine[len(mine)-1] = block
		blocks[w] = mine
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	cores.Split(len(need), func(w, lo, hi int) {
		base := 0
		for _, b := range blocks[:w] {
			base += len(b)
		}
		for k := lo; k < hi; k++ {
			l.names.ent[k] += uint64(base) << 32
		}
	})
	for _, b := range blocks {
		l.names.blocks = append(l.names.blocks, b...)
	}
	if err := l.decodeSteps(); err != nil {
		return err
	}
	l.r.ReleaseMapped(0) // the scan reads the file no more
	return nil
}

// mappedLimit is how many bytes of files the process may have mapped while
// a scan reads the database (graph.Reader.ReleaseMapped), checked every
// releaseEvery quads of the SPO pass, every releaseEvery/16 decoded terms,
// and after each class lookup: a scan reads nearly every page of the file
// once, and without it they all stayed resident (650 MB at a million
// citations, most of the file at ten million). It is the scan's own, not
// the writers' graph.DefaultMappedLimit (256 MiB, where a writer's random
// reads made each release cost): a scan reads each page once, so a
// release costs it little, and 128 MiB is what groups' help promises.
const (
	mappedLimit  = 128 << 20
	releaseEvery = 1 << 18
)

// decodeBlock is the size of the blocks decoded terms are copied into.
const decodeBlock = 1 << 20

// one returns the value of the first object of pred for s, once decoded.
func (l *loader) one(pr pred, s graph.ID) string { return l.names.at(l.get(pr, s)) }

// literal predicates: their objects are decoded whenever their subject is
// part of the snapshot. The lean sets are what grouping shows.
var (
	citationLiterals  = []pred{pCitationId, pObservedAt, pPosition, pQuestion, pBaseURL}
	normLiterals      = []pred{pSteps, pErrorCode, pErrorMessage} // pSteps first: see wantSteps
	keyLiterals       = []pred{pText, pCompare, pParsed, pHostRule, pRemovedParams}
	retrievalLiterals = []pred{pRetrievedAt, pFinalURL, pFinalStatus, pContentHash, pContentType, pSnapshotRef, pCanonicalDropped, pOutcome, pOutcomeError}
	hopLiterals       = []pred{pHopIndex, pFrom, pTo, pStatus, pAt, pCrossesHost, pLocation}
	declLiterals      = []pred{pDeclaredURL, pSignalSource}
	relationLiterals  = []pred{pFormat, pCapturedAt, pEvidence}

	leanCitationLiterals  = []pred{pCitationId}
	leanKeyLiterals       = []pred{pText, pCompare, pHostRule, pRemovedParams}
	leanRetrievalLiterals = []pred{pRetrievedAt, pFinalURL, pContentHash, pOutcome, pFinalStatus}
	evidenceLiterals      = []pred{pExtractor, pTextDigest, pSimHash, pSoftError, pMediaType, pExtractionMethod, pTitle, pOgTitle, pLanguage, pDatesDisagree, pWordCount, pExtractionProblem, pDeclaredDates}
	leanEvidenceLiterals  = []pred{pExtractor, pTextDigest, pSimHash, pSoftError}
	responseLiterals      = []pred{pCaptureRef}
	passageLiterals       = []pred{pPassageFound, pPassageScore, pPassageMethod, pSpanStart, pSpanEnd}
	leanHopLiterals       = []pred{pCrossesHost}
)

// partial is a citation's node ids, gathered before the terms are decoded.
// Its id is l.names.at(id): a string here was 16 bytes a citation, and
// reading it through node's pairs (l.one) cost the building of every
// member a few more cache misses.
type partial struct {
	node, raw, norm, key graph.ID
	rawText, fragment    graph.ID // the raw URL's literals
	id                   graph.ID // the citation id's literal
	// Its retrievals and relations are l.span(pRetrievedIn, node) and
	// l.span(pQualifiedRelation, node): not copied here, which saved 53 MB
	// of slices at a million citations.
}

// gathered is every citation's node ids, with the terms they show
// decoded: what building a Citation needs, kept after the read
// transaction ends.
type gathered struct {
	l *loader
	// norms are the normalizations under the policy, made once and
	// shared, by their position in normIDs: for a whole snapshot (not
	// lean), which keeps every citation. A lean scan's builder shares them
	// within one call of Citations (a group: citations of one raw URL
	// have one key) and keeps none after it, so that what the groups
	// written have built is not held to the end.
	norms   []atomic.Pointer[store.Normalization]
	normIDs idSet
	policy  store.PolicyRef
	parts   []partial
	declsOf map[graph.ID][]graph.ID
	// The content evidence (evidence.go): a retrieval's extractions, an
	// extraction's evidence, a citation's passage checks.
	extsOf map[graph.ID][]graph.ID
	evOf   map[graph.ID]graph.ID
	passOf map[graph.ID][]graph.ID
	lean   bool
}

// gather reads the node ids of every citation and decodes the terms the
// citations show. Lean leaves out what only a full snapshot shows (the
// answer, engine, question, observation time, hop details): grouping does
// not need them.
func (l *loader) gather(pol store.PolicyRef, lean bool) (*gathered, error) {
	nodes, err := l.instances(vocab.Citation)
	if err != nil {
		return nil, err
	}
	cl, kl, rl, hl, el, sl := citationLiterals, keyLiterals, retrievalLiterals, hopLiterals, evidenceLiterals, responseLiterals
	preds := []pred{pCites, pFragment, pNormalizedAs, pProvQualifiedAssociation, pProvHadPlan, pProvWasGeneratedBy,
		pRetrievedIn, pHop, pQualifiedRelation, pTarget, pOfRetrieval, pFromResponse, pCheckOf, pCheckedAgainst}
	if lean {
		cl, kl, rl, hl, el, sl = leanCitationLiterals, leanKeyLiterals, leanRetrievalLiterals, leanHopLiterals, leanEvidenceLiterals, nil
	} else {
		preds = append(preds, pInAnswer, pAnswerId, pProvWasAttributedTo, pEngineName)
	}
	if err := l.read(slices.Concat(cl, normLiterals, kl, rl, hl, declLiterals, relationLiterals, el, sl, passageLiterals, preds)...); err != nil {
		return nil, err
	}
	keys, err := l.instances(vocab.ComparisonKey)
	if err != nil {
		return nil, err
	}
	decls, err := l.instances(vocab.CanonicalDeclaration)
	if err != nil {
		return nil, err
	}
	l.rels = map[graph.ID]string{}
	for _, k := range model.RelationKinds {
		ids, err := l.instances(k.Class)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			l.rels[id] = k.Name
		}
	}
	// Which node is each normalization's key and each retrieval's
	// canonical declarations.
	keyOf := make([]graph.ID, l.r.MaxID()+1) // normalization -> its key
	g := &gathered{l: l, policy: pol, declsOf: map[graph.ID][]graph.ID{}, lean: lean, normIDs: newIDSet(l.r.MaxID()),
		extsOf: map[graph.ID][]graph.ID{}, evOf: map[graph.ID]graph.ID{}, passOf: map[graph.ID][]graph.ID{}}
	if err := g.evidence(); err != nil {
		return nil, err
	}
	// What each key was generated by is read on every core; the answers
	// are applied in key order, so that the result does not depend on the
	// split.
	genBy := make([][][2]graph.ID, cores.N()) // (normalization, key)
	cores.Split(len(keys), func(w, lo, hi int) {
		var buf []graph.ID
		for _, k := range keys[lo:hi] {
			buf = l.appendAll(buf[:0], pProvWasGeneratedBy, k)
			for _, o := range buf {
				genBy[w] = append(genBy[w], [2]graph.ID{o, k})
			}
		}
	})
	for _, part := range genBy {
		for _, ok := range part {
			keyOf[ok[0]] = ok[1]
		}
	}
	var buf []graph.ID
	for _, d := range decls {
		buf = l.appendAll(buf[:0], pProvWasGeneratedBy, d)
		for _, o := range buf {
			g.declsOf[o] = append(g.declsOf[o], d)
		}
	}
	policy := l.r.ID(graph.IRI(pol.Node))
	// Gather each citation's node ids, and the ids to decode, on every core.
	g.parts = make([]partial, len(nodes))
	cores.Split(len(nodes), func(w, lo, hi int) {
		want := l.want
		lits := func(preds []pred, s graph.ID) {
			for _, p := range preds {
				l.wantAll(p, s)
			}
		}
		var nrms, hops []graph.ID // scratch
		for i := lo; i < hi; i++ {
			n := nodes[i]
			pt := partial{node: n, raw: l.get(pCites, n), id: l.get(pCitationId, n)}
			if !lean { // grouping never shows the IRIs of citations, raw URLs and normalizations
				want(n, pt.raw)
			}
			pt.rawText, pt.fragment = l.get(pText, pt.raw), l.get(pFragment, pt.raw)
			want(pt.rawText, pt.fragment)
			lits(cl, n)
			if ans := l.get(pInAnswer, n); ans != 0 {
				want(l.get(pAnswerId, ans), l.get(pEngineName, l.get(pProvWasAttributedTo, ans)))
			}
			nrms = l.appendAll(nrms[:0], pNormalizedAs, n)
			for _, nrm := range nrms {
				if plan := l.get(pProvHadPlan, l.get(pProvQualifiedAssociation, nrm)); plan == 0 || plan != policy {
					continue
				}
				pt.norm, pt.key = nrm, keyOf[nrm]
				if !lean {
					g.normIDs.add(nrm)
				}
				if !lean {
					want(nrm)
				}
				l.wantSteps(nrm)
				lits(normLiterals[1:], nrm)
				if pt.key != 0 {
					lits(kl, pt.key)
				}
			}
			for _, rt := range l.span(pRetrievedIn, n) {
				want(rt)
				lits(rl, rt)
				hops = l.appendAll(hops[:0], pHop, rt)
				for _, h := range hops {
					lits(hl, h)
				}
				for _, d := range g.declsOf[rt] {
					lits(declLiterals, d)
				}
				for _, x := range g.extsOf[rt] {
					lits(el, g.evOf[x])
					lits(sl, l.get(pFromResponse, x))
				}
			}
			for _, p := range g.passOf[n] {
				lits(passageLiterals, p)
			}
			for _, rel := range l.span(pQualifiedRelation, n) {
				lits(relationLiterals, rel)
				want(l.get(pText, l.get(pTarget, rel)))
			}
			g.parts[i] = pt
		}
	})
	g.norms = make([]atomic.Pointer[store.Normalization], g.normIDs.seal())
	if err := l.decode(); err != nil {
		return nil, err
	}
	return g, nil
}

// builder builds Citation values from gathered ids. Citations of the same
// raw URL share its normalization node, which is made once and shared (it
// is only read). A builder is for one goroutine.
type builder struct {
	g *gathered
	// Lists of removed parameters shared by several normalizations are
	// parsed once. Step logs are not cached: they hold the URL's own
	// values, so nearly every one is different.
	params map[graph.ID][]string
	// norms are a lean scan's normalizations made in this call of
	// Citations, by node.
	norms map[graph.ID]*store.Normalization
}

func (g *gathered) builder() *builder {
	return &builder{g: g, params: map[graph.ID][]string{}, norms: map[graph.ID]*store.Normalization{}}
}

// fill sets c to the citation of pt.
func (b *builder) fill(c *store.Citation, pt *partial) {
	l := b.g.l
	n := pt.node
	*c = store.Citation{
		ID:         l.names.at(pt.id),
		ObservedAt: l.one(pObservedAt, n), Position: l.one(pPosition, n),
		Question: l.one(pQuestion, n), BaseURL: l.one(pBaseURL, n),
		Raw: l.names.at(pt.rawText),
	}
	if !b.g.lean {
		c.Node, c.RawNode = l.names.at(n), l.names.at(pt.raw)
	}
	if ans := l.get(pInAnswer, n); ans != 0 {
		c.AnswerID = l.one(pAnswerId, ans)
		c.Engine = l.one(pEngineName, l.get(pProvWasAttributedTo, ans))
	}
	if pt.fragment != 0 {
		v := l.names.at(pt.fragment)
		c.Fragment = &v
	}
	if pt.norm != 0 && b.g.lean {
		if c.Norm = b.norms[pt.norm]; c.Norm == nil {
			c.Norm = buildNormalization(idNodes{l}, pt.norm, pt.key, &b.g.policy, normOptions[graph.ID]{lean: true, params: b.params})
			b.norms[pt.norm] = c.Norm
		}
	} else if pt.norm != 0 {
		k, _ := b.g.normIDs.index(pt.norm)
		if c.Norm = b.g.norms[k].Load(); c.Norm == nil {
			// Two goroutines may make the same one: one of them is kept.
			c.Norm = buildNormalization(idNodes{l}, pt.norm, pt.key, &b.g.policy, normOptions[graph.ID]{lean: b.g.lean, params: b.params})
			if !b.g.norms[k].CompareAndSwap(nil, c.Norm) {
				c.Norm = b.g.norms[k].Load()
			}
		}
	}
	for _, r := range l.span(pRetrievedIn, n) {
		rt := buildRetrieval(idNodes{l}, r, b.g.declsOf[r])
		if exts := b.g.extsOf[r]; len(exts) > 0 {
			evidenceOf(idNodes{l}, rt, exts, func(x graph.ID) graph.ID { return b.g.evOf[x] },
				func(x graph.ID) graph.ID { return l.get(pFromResponse, x) }, b.g.passOf[n],
				func(p graph.ID) graph.ID { return l.get(pCheckedAgainst, p) }, b.g.lean, c)
		}
		c.Retrievals = append(c.Retrievals, rt)
	}
	for _, rel := range l.span(pQualifiedRelation, n) {
		c.Relations = append(c.Relations, buildRelation(idNodes{l}, rel, l.rels[rel]))
	}
	sortCitation(c)
}

// sortCitation puts a citation's retrievals and relations in the one order
// both access paths (the scan, Reader) give them.
func sortCitation(c *store.Citation) {
	slices.SortFunc(c.Retrievals, func(a, b *store.Retrieval) int { return strings.Compare(a.RetrievedAt+a.Node, b.RetrievedAt+b.Node) })
	slices.SortFunc(c.Relations, func(a, b *store.Relation) int {
		return strings.Compare(a.Type+"\x00"+a.Target+"\x00"+a.Evidence, b.Type+"\x00"+b.Target+"\x00"+b.Evidence)
	})
}

// stepRules returns the rules a step log (the JSON array of
// normalize.Step that ingest stores) names, each once, in order, without
// parsing the rest: it looks for the "rule" members. A quote inside a JSON
// string is always escaped, so `"rule":"` can only be a member name
// followed by its value, and a rule name holds no quote or escape.
func stepRules(log string) []string {
	const member = `"rule":"`
	var out []string
	for {
		i := strings.Index(log, member)
		if i < 0 {
			return out
		}
		log = log[i+len(member):]
		j := strings.IndexByte(log, '"')
		if j < 0 {
			return out
		}
		if r := log[:j]; !slices.Contains(out, r) {
			out = append(out, r)
		}
		log = log[j+1:]
	}
}

// rulesOf returns the rules of a parsed step log, each once, in order.
func rulesOf(steps []normalize.Step) []string {
	var out []string
	for _, st := range steps {
		if !slices.Contains(out, string(st.Rule)) {
			out = append(out, string(st.Rule))
		}
	}
	return out
}

// evidence reads which extractions each retrieval has, which evidence each
// extraction generated, and which passage checks each citation has: links
// that point from the evidence to what it is of, read through the class
// index (a database without evidence costs three empty lookups).
func (g *gathered) evidence() error {
	l := g.l
	exts, err := l.instances(vocab.Extraction)
	if err != nil {
		return err
	}
	for _, x := range exts {
		if rt := l.get(pOfRetrieval, x); rt != 0 {
			g.extsOf[rt] = append(g.extsOf[rt], x)
		}
	}
	evs, err := l.instances(vocab.ExtractedEvidence)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if x := l.get(pProvWasGeneratedBy, ev); x != 0 {
			g.evOf[x] = ev
		}
	}
	checks, err := l.instances(vocab.PassageCheck)
	if err != nil {
		return err
	}
	for _, p := range checks {
		if c := l.get(pCheckOf, p); c != 0 {
			g.passOf[c] = append(g.passOf[c], p)
		}
	}
	return nil
}
