package citestore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Mapper turns citation records into quads, following ontology/MODEL.md,
// under one normalization policy. It is not safe for concurrent use.
//
// It is the one mapping of the bbolt backend: Store.Append and every write
// path of internal/ingest (records, renormalization, retrievals, evidence)
// use it, so that what goes through store.Appender and what ingest still
// writes as quads are the same quads.
type Mapper struct {
	policy  *normalize.Policy
	norm    *normalize.Normalizer // no base URL
	lenient *normalize.Normalizer // for reading hop hosts
	digest  string
	pol     graph.Term // the policy node
	assoc   graph.Term // the association of provgraph with the policy
	quads   []graph.Quad
	// described holds the shared nodes (answers, engines, raw URLs,
	// normalizations, related resources) whose own quads this mapper has
	// emitted already: many citations share them, and emitting their quads
	// once per run instead of once per citation saves the store a fifth of
	// its work. It is only an optimization: a repeat would be skipped by
	// the store anyway, so forgetting (the set is bounded) is harmless.
	//
	// It is kept in two generations of at most maxDescribed/2 nodes: when
	// described is full it becomes older and a new one starts, and a node
	// found in older moves back to described. A node still shared is so
	// kept across the turnover, where one set emptied when full forgot
	// every node at once and emitted each again (at a million citations,
	// 1.2 million quads that the store had to look up and skip).
	described, older map[[16]byte]struct{}
}

// maxDescribed bounds the memory of Mapper.described and Mapper.older.
const maxDescribed = 1 << 20

// first reports whether node is described for the first time, and
// remembers it.
// Nodes are remembered by the 128-bit digest their IRI ends with (every
// node the mapper describes is minted), 16 bytes instead of the whole IRI:
// a million of them cost about 30 MB.
func (m *Mapper) first(node graph.Term) bool {
	k := nodeKey(node.Value)
	if _, ok := m.described[k]; ok {
		return false
	}
	_, seen := m.older[k]
	if m.described == nil || len(m.described) >= maxDescribed/2 {
		m.older, m.described = m.described, make(map[[16]byte]struct{}, 1024)
	}
	m.described[k] = struct{}{}
	return !seen
}

// nodeKey returns the digest a minted IRI ends with, or a digest of any
// other IRI.
func nodeKey(iri string) (k [16]byte) {
	if len(iri) >= 32 {
		if _, err := hex.Decode(k[:], []byte(iri[len(iri)-32:])); err == nil {
			return k
		}
	}
	sum := sha256.Sum256([]byte(iri))
	copy(k[:], sum[:])
	return k
}

// NewMapper returns a Mapper for policy p.
func NewMapper(p *normalize.Policy) (*Mapper, error) {
	n, err := normalize.New(p, nil)
	if err != nil {
		return nil, err
	}
	l, err := normalize.New(normalize.Lenient(), nil)
	if err != nil {
		return nil, err
	}
	return &Mapper{
		policy:  p,
		norm:    n,
		lenient: l,
		digest:  p.Digest(),
		pol:     Mint("policy", p.Digest()),
		assoc:   Mint("association", p.Digest()),
	}, nil
}

// PolicyNode returns the node of the mapper's policy.
func (m *Mapper) PolicyNode() graph.Term { return m.pol }

var (
	rdfType = iri(vocab.RDFType)
	xsdInt  = graph.XSDInteger
	xsdTime = graph.XSDDateTime
)

func (m *Mapper) add(s graph.Term, p string, o graph.Term) {
	m.quads = append(m.quads, graph.Quad{S: s, P: iri(p), O: o})
}

func (m *Mapper) types(s graph.Term, classes ...string) {
	for _, c := range classes {
		m.add(s, vocab.RDFType, iri(c))
	}
}

func (m *Mapper) str(s graph.Term, p, v string) {
	if v != "" {
		m.add(s, p, graph.String(v))
	}
}

func (m *Mapper) typed(s graph.Term, p, lexical, datatype string) {
	if lexical != "" {
		m.add(s, p, graph.Literal(lexical, datatype))
	}
}

// PolicyQuads describes the policy, provgraph as an agent, and their
// association; every normalization under the policy points at them.
func (m *Mapper) PolicyQuads() []graph.Quad {
	m.quads = m.quads[:0]
	pi := normalize.ParserInfo()
	m.types(m.pol, vocab.NormalizationPolicy, vocab.ProvPlan, vocab.ProvEntity)
	m.str(m.pol, vocab.PolicyName, m.policy.Name())
	m.str(m.pol, vocab.PolicyVersion, m.policy.Version())
	m.str(m.pol, vocab.PolicyDigest, m.digest)
	m.str(m.pol, vocab.ParserName, pi.Name)
	m.str(m.pol, vocab.ParserVersion, pi.Version)
	m.str(m.pol, vocab.PolicyText, string(m.policy.Text()))
	m.types(AgentIRI, vocab.ProvSoftwareAgent, vocab.ProvAgent)
	m.add(AgentIRI, vocab.RDFSLabel, graph.String("provgraph"))
	m.types(m.assoc, vocab.ProvAssociation, vocab.ProvInfluence)
	m.add(m.assoc, vocab.ProvAgentProp, AgentIRI)
	m.add(m.assoc, vocab.ProvHadPlan, m.pol)
	return append([]graph.Quad(nil), m.quads...)
}

// Citation is what Quads learned about a record, for the caller's counts
// and the grouping views.
type Citation struct {
	ID       string
	Node     graph.Term
	Digest   string
	Rejected *normalize.Error // the raw URL's rejection, if any
	// Row is the citation's view row under the mapper's policy, as its
	// quads give it when its retrieval node (Retrieval, zero if none) is
	// new: a citation's rows are written from it where the batch adds
	// the citation (WriteNewViewRows).
	Row       store.ViewRow
	Retrieval graph.Term
}

// Quads appends the quads of one record to dst.
func (m *Mapper) Quads(dst []graph.Quad, r *model.Record) ([]graph.Quad, Citation, error) {
	m.quads = dst
	id := r.ID()
	cit := Mint("citation", id)
	info := Citation{ID: id, Node: cit, Digest: r.Digest()}
	raw := *r.RawURL

	m.types(cit, vocab.Citation, vocab.ProvEntity)
	m.str(cit, vocab.CitationId, id)
	m.str(cit, vocab.RecordDigest, info.Digest)
	m.typed(cit, vocab.ObservedAt, r.ObservedAt, xsdTime)
	m.typed(cit, vocab.Position, string(r.Position), xsdInt)
	m.str(cit, vocab.Question, r.Question)
	m.str(cit, vocab.BaseURL, r.BaseURL)
	m.str(cit, vocab.CitedText, r.CitedText)
	m.str(cit, vocab.CitedTitle, r.CitedTitle)
	if r.Engine != "" || r.AnswerID != "" {
		ans := Mint("answer", r.Engine, r.AnswerID)
		m.add(cit, vocab.InAnswer, ans)
		if m.first(ans) {
			m.types(ans, vocab.Answer, vocab.ProvEntity)
			m.str(ans, vocab.AnswerId, r.AnswerID)
			if r.Engine != "" {
				eng := Mint("engine", r.Engine)
				m.add(ans, vocab.ProvWasAttributedTo, eng)
				if m.first(eng) {
					m.types(eng, vocab.AnswerEngine, vocab.ProvSoftwareAgent, vocab.ProvAgent)
					m.str(eng, vocab.EngineName, r.Engine)
				}
			}
		}
	}

	rawNode := Mint("raw", raw)
	m.add(cit, vocab.Cites, rawNode)
	newRaw := m.first(rawNode)
	if newRaw {
		m.types(rawNode, vocab.RawURL, vocab.ProvEntity)
		m.add(rawNode, vocab.Text, graph.String(raw))
	}

	res, nerr, rules, err := m.normalization(cit, rawNode, raw, r.BaseURL)
	if err != nil {
		return dst, info, err
	}
	info.Rejected = nerr
	var frag *string
	if nerr == nil && res.HasFragment {
		frag = &res.Fragment
	} else if _, f, ok := strings.Cut(raw, "#"); ok && nerr != nil {
		frag = &f
	}
	if newRaw && frag != nil {
		m.add(rawNode, vocab.Fragment, graph.String(*frag))
	}

	if r.Retrieval != nil {
		info.Retrieval = m.retrieval(cit, rawNode, raw, r.Retrieval)
	}
	rels := r.Relations
	detected := DetectRelations(raw, res.Parsed)
	all := append(rels[:len(rels):len(rels)], detected...)
	for i, rel := range all {
		evidence := model.EvidenceDeclared
		if i >= len(rels) {
			evidence = model.EvidenceDetected
		}
		m.relation(cit, rawNode, rel, evidence)
	}
	info.Row = m.viewRow(id, res, nerr, r.Retrieval, info.Retrieval, all)
	info.Row.Member = m.listed(id, raw, frag, res, nerr, rules, r.Retrieval, all, len(rels))
	return m.quads, info, nil
}

// normalization adds the normalization of raw (resolved against base)
// under the mapper's policy, and its key, and links the citation to it.
// The same raw text and base under the same policy always give the same
// nodes, whichever citation asks. It returns the rules its step log
// names, as a reader finds them (stepRules).
func (m *Mapper) normalization(cit, rawNode graph.Term, raw, base string) (normalize.Result, *normalize.Error, []string, error) {
	n := m.norm
	if base != "" {
		var err error
		n, err = normalize.New(m.policy, &normalize.Options{Base: base})
		if err != nil {
			return normalize.Result{}, nil, nil, err
		}
	}
	res, err := n.Normalize(raw)
	var nerr *normalize.Error
	if err != nil && !errors.As(err, &nerr) {
		return res, nil, nil, err
	}
	steps := stepsJSON(res.Steps())
	rules := stepRules(steps)
	nrm := Mint("norm", raw, base, m.digest)
	m.add(cit, vocab.NormalizedAs, nrm)
	if !m.first(nrm) {
		return res, nerr, rules, nil // its quads and its key's are emitted already
	}
	m.types(nrm, vocab.Normalization, vocab.ProvActivity)
	m.add(nrm, vocab.ProvUsed, rawNode)
	m.add(nrm, vocab.ProvQualifiedAssociation, m.assoc)
	m.str(nrm, vocab.Steps, steps)
	if nerr != nil {
		m.str(nrm, vocab.ErrorCode, string(nerr.Code))
		m.str(nrm, vocab.ErrorMessage, nerr.Error())
		return res, nerr, rules, nil
	}
	key := Mint("key", raw, base, m.digest)
	m.types(key, vocab.ComparisonKey, vocab.ProvEntity)
	m.add(key, vocab.ProvWasGeneratedBy, nrm)
	m.add(key, vocab.ProvWasDerivedFrom, rawNode)
	m.add(key, vocab.Text, graph.String(res.Key))
	m.str(key, vocab.Compare, string(res.Compare))
	if res.Parsed != raw {
		m.str(key, vocab.Parsed, res.Parsed)
	}
	if p := res.RemovedParams(); len(p) > 0 {
		m.str(key, vocab.RemovedParams, jsonText(p))
	}
	m.str(key, vocab.HostRule, res.HostRule)
	return res, nil, rules, nil
}

// Rejects reports whether the policy rejects r's raw URL, without making
// any quad: how a resumed ingest counts the rejections among the lines
// its run wrote before the interruption, which it does not write again.
func (m *Mapper) Rejects(r *model.Record) (bool, error) {
	n := m.norm
	if r.BaseURL != "" {
		var err error
		if n, err = normalize.New(m.policy, &normalize.Options{Base: r.BaseURL}); err != nil {
			return false, err
		}
	}
	_, err := n.Normalize(*r.RawURL)
	var nerr *normalize.Error
	if err != nil && !errors.As(err, &nerr) {
		return false, err
	}
	return nerr != nil, nil
}

// NormalizationQuads appends to dst the quads of one citation's
// normalization under the mapper's policy: what renormalizing adds.
func (m *Mapper) NormalizationQuads(dst []graph.Quad, cit, rawNode graph.Term, raw, base string) ([]graph.Quad, *normalize.Error, error) {
	m.quads = dst
	_, nerr, _, err := m.normalization(cit, rawNode, raw, base)
	return m.quads, nerr, err
}

func (m *Mapper) retrieval(cit, rawNode graph.Term, raw string, rt *model.Retrieval) graph.Term {
	ret := retrievalNode(raw, rt)
	m.add(cit, vocab.RetrievedIn, ret)
	m.retrievalQuads(ret, rawNode, rt)
	return ret
}

// viewRow is the view row of a record under the mapper's policy, as its
// quads give it (viewRowOf of the citation read back) while its
// retrieval node holds nothing but what the record says.
func (m *Mapper) viewRow(id string, res normalize.Result, nerr *normalize.Error, rt *model.Retrieval, ret graph.Term, rels []model.Relation) store.ViewRow {
	row := store.ViewRow{CitationID: id, State: store.RowKeyed, Key: res.Key, KeyContent: res.Compare == normalize.CompareContent}
	if nerr != nil {
		row = store.ViewRow{CitationID: id, State: store.RowRejected}
	}
	row.Related = len(rels) > 0
	if rt != nil {
		if rt.FinalURL != "" && len(rt.Hops) > 0 {
			row.Related = true
			row.Links = append(row.Links, rt.FinalURL)
			cross := false
			for _, h := range rt.Hops {
				cross = cross || m.host(h.From) != m.host(h.To)
			}
			if !cross {
				row.Redirects = []string{rt.FinalURL}
			}
		}
		if len(rt.Canonical) > 0 {
			row.Related = true
		}
		for _, c := range rt.Canonical {
			row.Links = append(row.Links, c.URL)
		}
		if model.Successful(rt.Outcome, string(rt.FinalStatus), "") {
			row.Evidence = []store.ViewEvidence{{Retrieval: ret.Value, Content: rt.ContentHash}}
		}
	}
	for _, rel := range rels {
		row.Links = append(row.Links, rel.Target)
	}
	slices.Sort(row.Links)
	row.Links = slices.Compact(row.Links)
	return row
}

// listed is the member record of a record's citation (store.Listed), as
// its quads give it while its retrieval node holds nothing but what the
// record says: rels are its relations, the first declared of them
// declared, the rest detected.
func (m *Mapper) listed(id, raw string, frag *string, res normalize.Result, nerr *normalize.Error, rules []string, rt *model.Retrieval, rels []model.Relation, declared int) *store.Citation {
	c := &store.Citation{ID: id, Raw: raw, Fragment: frag}
	n := &store.Normalization{Rules: rules}
	if nerr != nil {
		n.ErrorCode, n.ErrorMessage = string(nerr.Code), nerr.Error()
	} else {
		n.Key, n.Compare, n.HostRule, n.RemovedParams = res.Key, string(res.Compare), res.HostRule, res.RemovedParams()
	}
	c.Norm = n
	if rt != nil {
		r := &store.Retrieval{FinalURL: rt.FinalURL, FinalStatus: store.Integer(rt.FinalStatus), ContentHash: rt.ContentHash, Outcome: rt.Outcome, Canonicals: rt.Canonical}
		for i, h := range rt.Hops {
			r.Hops = append(r.Hops, store.Hop{Index: i, CrossesHost: m.host(h.From) != m.host(h.To)})
		}
		c.Retrievals = []*store.Retrieval{r}
	}
	for i, rel := range rels {
		evidence := model.EvidenceDeclared
		if i >= declared {
			evidence = model.EvidenceDetected
		}
		c.Relations = append(c.Relations, &store.Relation{Relation: rel, Evidence: evidence})
	}
	return store.Listed(c)
}

// retrievalNode mints the node of a retrieval of raw: from the raw text and
// the canonical JSON of the record, so a fetch at another time is another
// node.
func retrievalNode(raw string, rt *model.Retrieval) graph.Term {
	return graph.IRI(model.RetrievalIRI(raw, rt))
}

// RetrievalQuads appends to dst the quads of a retrieval of the raw URL
// raw (node rawNode) that provgraph made in the resolve run run, linked
// from each of the citations cits, and returns the retrieval's node. It
// adds to what is stored; nothing earlier is replaced.
func (m *Mapper) RetrievalQuads(dst []graph.Quad, cits []graph.Term, rawNode graph.Term, raw string, rt *model.Retrieval, run graph.Term) ([]graph.Quad, graph.Term) {
	m.quads = dst
	ret := retrievalNode(raw, rt)
	for _, c := range cits {
		m.add(c, vocab.RetrievedIn, ret)
	}
	m.retrievalQuads(ret, rawNode, rt)
	m.add(ret, vocab.InRun, run)
	m.add(ret, vocab.ProvWasAssociatedWith, AgentIRI)
	return m.quads, ret
}

// SameHost reports whether URLs a and b name the same host, as the
// pg:crossesHost of a hop between them says.
func (m *Mapper) SameHost(a, b string) bool { return m.host(a) == m.host(b) }

func (m *Mapper) retrievalQuads(ret, rawNode graph.Term, rt *model.Retrieval) {
	m.types(ret, vocab.Retrieval, vocab.ProvActivity)
	m.add(ret, vocab.ProvUsed, rawNode)
	m.typed(ret, vocab.RetrievedAt, rt.RetrievedAt, xsdTime)
	m.typed(ret, vocab.FinalStatus, string(rt.FinalStatus), xsdInt)
	m.str(ret, vocab.ContentHash, rt.ContentHash)
	m.str(ret, vocab.ContentType, rt.ContentType)
	m.str(ret, vocab.SnapshotRef, rt.SnapshotRef)
	m.str(ret, vocab.Outcome, rt.Outcome)
	m.str(ret, vocab.OutcomeError, rt.OutcomeError)
	if rt.CanonicalDropped > 0 {
		m.typed(ret, vocab.CanonicalDropped, strconv.Itoa(rt.CanonicalDropped), xsdInt)
	}
	declarer := rawNode
	if rt.FinalURL != "" {
		m.str(ret, vocab.FinalURL, rt.FinalURL)
		res := Mint("resolved", rt.FinalURL)
		m.add(ret, vocab.ResolvedTo, res)
		if m.first(res) {
			m.types(res, vocab.ResolvedURL, vocab.ProvEntity)
			m.add(res, vocab.Text, graph.String(rt.FinalURL))
		}
		m.add(res, vocab.ProvWasGeneratedBy, ret)
		declarer = res
	}
	for i, h := range rt.Hops {
		hop := Mint("hop", ret.Value, strconv.Itoa(i))
		m.add(ret, vocab.Hop, hop)
		m.types(hop, vocab.RedirectHop, vocab.ProvActivity)
		m.typed(hop, vocab.HopIndex, strconv.Itoa(i), xsdInt)
		m.str(hop, vocab.From, h.From)
		m.str(hop, vocab.To, h.To)
		m.typed(hop, vocab.Status, string(h.Status), xsdInt)
		m.typed(hop, vocab.At, h.At, xsdTime)
		m.str(hop, vocab.Location, h.Location)
		m.typed(hop, vocab.CrossesHost, strconv.FormatBool(m.host(h.From) != m.host(h.To)), graph.XSDBoolean)
	}
	for _, c := range rt.Canonical {
		decl := Mint("canonical", ret.Value, c.URL, c.Source)
		m.types(decl, vocab.CanonicalDeclaration, vocab.ProvEntity)
		m.str(decl, vocab.DeclaredURL, c.URL)
		m.str(decl, vocab.SignalSource, c.Source)
		m.add(decl, vocab.DeclaredBy, declarer)
		m.add(decl, vocab.ProvWasGeneratedBy, ret)
	}
}

// host returns the host a browser would contact for u, or u itself when it
// does not parse, so that two unparsable URLs only match when equal.
func (m *Mapper) host(u string) string {
	res, err := m.lenient.Normalize(u)
	if err != nil {
		return u
	}
	return res.Host()
}

func (m *Mapper) relation(cit, rawNode graph.Term, rel model.Relation, evidence string) {
	rc, _ := model.RelationKindNamed(rel.Type) // ParseRecord accepted it
	target := Mint("resource", rel.Target)
	if m.first(target) {
		m.types(target, vocab.RelatedResource, vocab.ProvEntity)
		m.add(target, vocab.Text, graph.String(rel.Target))
	}
	q := Mint("relation", cit.Value, rel.Type, rel.Target, rel.Format, rel.CapturedAt, evidence)
	m.add(cit, vocab.QualifiedRelation, q)
	m.types(q, vocab.SourceRelation, rc.Class, vocab.ProvInfluence)
	m.add(q, vocab.Target, target)
	m.str(q, vocab.Evidence, evidence)
	m.str(q, vocab.Format, rel.Format)
	m.typed(q, vocab.CapturedAt, rel.CapturedAt, xsdTime)
	m.add(rawNode, rc.Property, target)
}

// stepsJSON encodes a step log as one JSON array literal.
func stepsJSON(steps []normalize.Step) string {
	if len(steps) == 0 {
		return "[]"
	}
	return jsonText(steps)
}

// jsonText encodes v as compact JSON without HTML escaping, so "<" and "&"
// in URLs stay readable in the literal.
func jsonText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // plain data
	}
	return strings.TrimSuffix(b.String(), "\n")
}
