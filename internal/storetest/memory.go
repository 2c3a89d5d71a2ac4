package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Memory is the reference backend: store.Backend over a few maps, written
// from the contracts in internal/store and nothing else. It is what a
// real backend's answers are compared with on data no fixture covers
// (see internal/graph/citestore's TestMatchesMemory), and it shows that the
// suite asks only what the interface promises. It is not for production:
// it keeps everything in memory and forgets it on exit.
type Memory struct {
	mu       sync.Mutex
	digest   map[string]string      // citation id -> digest
	raw      map[string][]string    // raw URL -> ids
	key      map[[2]string][]string // (policy digest, key) -> ids
	content  map[string][]string    // content hash -> ids
	policies map[string]store.PolicyRef
	cits     map[string]*memCitation // citation id -> what a scan shows
	// final: final URL -> retrieval IRI -> ids; target: relation target
	// -> ids (declared relations only).
	final  map[string]map[string][]string
	target map[string][]string
}

// memCitation is what Scan shows of a citation. Relations are the declared
// ones only: detecting relations is the bbolt backend's ingest mapping,
// which the reference model does not copy.
type memCitation struct {
	rec      *model.Record
	norms    map[string]*store.Normalization // policy digest -> its normalization
	raw      string
	keys     map[string]string // policy digest -> key
	rejected map[string]bool   // policy digest -> rejected
	// keyContent: policy digest -> its key needs content to compare
	keyContent map[string]bool
	// evidence is the retrieval IRI and content hash of its successful
	// retrievals ("" for a successful one without a hash). Append writes no extraction, so a
	// Memory citation has no text digest or SimHash: storetest checks
	// those against the bbolt backend only (citestore's tests).
	evidence                                [][2]string
	content, finalURL, canonical, relations []string
	// redirects are the final URLs of its same-host redirects; related
	// says it has a declared relation, a canonical declaration or a
	// redirect.
	redirects []string
	related   bool
}

var _ store.Backend = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{
		digest: map[string]string{}, raw: map[string][]string{}, key: map[[2]string][]string{},
		content: map[string][]string{}, policies: map[string]store.PolicyRef{}, cits: map[string]*memCitation{},
		final: map[string]map[string][]string{}, target: map[string][]string{},
	}
}

func found(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// Digest implements store.Lookup.
func (m *Memory) Digest(ctx context.Context, id string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.digest[id]
	return d, ok, ctx.Err()
}

// ByRaw implements store.Lookup.
func (m *Memory) ByRaw(ctx context.Context, raw string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.raw[raw]), ctx.Err()
}

// ByKey implements store.Lookup.
func (m *Memory) ByKey(ctx context.Context, policyDigest, key string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.key[[2]string{policyDigest, key}]), ctx.Err()
}

// ByContent implements store.Lookup.
func (m *Memory) ByContent(ctx context.Context, hash string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.content[hash]), ctx.Err()
}

// Policies implements store.Lookup.
func (m *Memory) Policies(ctx context.Context) ([]model.PolicyRef, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []model.PolicyRef
	for _, p := range m.policies {
		out = append(out, p.PolicyRef)
	}
	slices.SortFunc(out, func(a, b model.PolicyRef) int { return cmpString(a.Digest, b.Digest) })
	return out, ctx.Err()
}

// StoredPolicies implements store.Catalog. Memory records no runs, so
// every LastRun is zero and the order is the digests'.
func (m *Memory) StoredPolicies(ctx context.Context) ([]store.PolicyRef, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Collect(maps.Values(m.policies))
	slices.SortFunc(out, func(a, b store.PolicyRef) int { return cmpString(a.Digest, b.Digest) })
	return out, ctx.Err()
}

// Runs implements store.Catalog: Memory records no runs.
func (m *Memory) Runs(ctx context.Context) ([]store.Run, error) { return []store.Run{}, ctx.Err() }

// Append implements store.Appender: everything is checked and normalized
// first, then applied, so a failing batch leaves the maps as they were.
func (m *Memory) Append(ctx context.Context, b store.Batch) (int, error) {
	if b.Policy == nil {
		return 0, errors.New("append: no policy")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	type row struct {
		id, digest, raw, key, hash string
		keyed, rejected, content   bool
		r                          *model.Record
		norm                       *store.Normalization
	}
	var rows []row
	seen := map[string]string{}
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
		if d, ok := m.digest[id]; ok {
			if d != digest {
				return 0, &store.ConflictError{CitationID: id, Where: "the database"}
			}
			continue
		}
		n, err := normalize.New(b.Policy, &normalize.Options{Base: r.BaseURL})
		if err != nil {
			return 0, fmt.Errorf("append: citation %s: %w", id, err)
		}
		rw := row{id: id, digest: digest, raw: *r.RawURL, r: r}
		res, err := n.Normalize(rw.raw)
		var nerr *normalize.Error
		switch {
		case err == nil:
			rw.key, rw.keyed = res.Key, true
			rw.content = res.Compare == normalize.CompareContent
		case errors.As(err, &nerr):
			rw.rejected = true
		default:
			return 0, fmt.Errorf("append: citation %s: %w", id, err)
		}
		rw.norm = memNormalization(res, nerr)
		if r.Retrieval != nil {
			rw.hash = r.Retrieval.ContentHash
		}
		rows = append(rows, rw)
	}
	for _, rw := range rows {
		m.digest[rw.id] = rw.digest
		m.raw[rw.raw] = append(m.raw[rw.raw], rw.id)
		if rw.keyed {
			k := [2]string{b.Policy.Digest(), rw.key}
			m.key[k] = append(m.key[k], rw.id)
		}
		if rw.hash != "" {
			m.content[rw.hash] = append(m.content[rw.hash], rw.id)
		}
		c := &memCitation{rec: rw.r, norms: map[string]*store.Normalization{b.Policy.Digest(): rw.norm}, raw: rw.raw, keys: map[string]string{}, rejected: map[string]bool{}, keyContent: map[string]bool{}}
		if rw.keyed {
			c.keys[b.Policy.Digest()] = rw.key
		}
		if rw.rejected {
			c.rejected[b.Policy.Digest()] = true
		}
		if rw.content {
			c.keyContent[b.Policy.Digest()] = true
		}
		if rt := rw.r.Retrieval; rt != nil && rt.FinalURL != "" {
			byRet := m.final[rt.FinalURL]
			if byRet == nil {
				byRet = map[string][]string{}
				m.final[rt.FinalURL] = byRet
			}
			iri := model.RetrievalIRI(rw.raw, rt)
			byRet[iri] = append(byRet[iri], rw.id)
		}
		for _, rel := range rw.r.Relations {
			m.target[rel.Target] = append(m.target[rel.Target], rw.id)
		}
		if rt := rw.r.Retrieval; rt != nil {
			if model.Successful(rt.Outcome, string(rt.FinalStatus), "") {
				c.evidence = append(c.evidence, [2]string{model.RetrievalIRI(rw.raw, rt), rt.ContentHash})
			}
			if rt.ContentHash != "" {
				c.content = append(c.content, rt.ContentHash)
			}
			if rt.FinalURL != "" {
				c.finalURL = append(c.finalURL, rt.FinalURL)
			}
			for _, cn := range rt.Canonical {
				if cn.URL != "" {
					c.canonical = append(c.canonical, cn.URL)
				}
			}
			c.related = len(rt.Canonical) > 0
			if rt.FinalURL != "" && len(rt.Hops) > 0 {
				c.related = true
				if sameHost(rt.Hops) {
					c.redirects = append(c.redirects, rt.FinalURL)
				}
			}
		}
		for _, rel := range rw.r.Relations {
			c.relations = append(c.relations, rel.Target)
		}
		c.related = c.related || len(rw.r.Relations) > 0
		m.cits[rw.id] = c
	}
	m.policies[b.Policy.Digest()] = store.PolicyRef{
		PolicyRef: model.PolicyRef{Name: b.Policy.Name(), Version: b.Policy.Version(), Digest: b.Policy.Digest()},
		Node:      model.Mint("policy", b.Policy.Digest()), Text: string(b.Policy.Text()),
	}
	return len(rows), nil
}

// memNormalization is the normalization of a result or rejection, as a
// backend hands it back (its Policy is set when a citation is built).
func memNormalization(res normalize.Result, nerr *normalize.Error) *store.Normalization {
	n := &store.Normalization{Steps: res.Steps()}
	for _, st := range res.Steps() {
		if !slices.Contains(n.Rules, string(st.Rule)) {
			n.Rules = append(n.Rules, string(st.Rule))
		}
	}
	if nerr != nil {
		n.ErrorCode, n.ErrorMessage = string(nerr.Code), nerr.Error()
		return n
	}
	n.Key, n.Compare, n.HostRule = res.Key, string(res.Compare), res.HostRule
	if res.Parsed != res.Raw {
		n.Parsed = res.Parsed
	}
	n.RemovedParams = res.RemovedParams()
	return n
}

// sameHost reports whether no hop changes host: the host a browser would
// contact (normalize.Result.Host) under the lenient policy's parse, or the
// URL itself when it does not parse, as the bbolt mapping decides
// pg:crossesHost.
func sameHost(hops []model.Hop) bool {
	n, err := normalize.New(normalize.Lenient(), nil)
	if err != nil {
		return false
	}
	host := func(u string) string {
		res, err := n.Normalize(u)
		if err != nil {
			return u
		}
		return res.Host()
	}
	for _, h := range hops {
		if host(h.From) != host(h.To) {
			return false
		}
	}
	return true
}

// Scan implements store.Scanner, interning with a store.Dict.
func (m *Memory) Scan(ctx context.Context, policyDigest string, f store.Fields, fn func(*store.Row) error) (store.Texts, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d := &store.Dict{}
	texts := &memTexts{Dict: d, m: m, f: f}
	if p, ok := m.policies[policyDigest]; ok {
		texts.policy = &p
	}
	intern := func(dst []store.Handle, field store.Fields, texts []string) []store.Handle {
		if f&field == 0 {
			return dst
		}
		for _, t := range texts {
			dst = append(dst, d.Intern(field, t))
		}
		slices.Sort(dst)
		return slices.Compact(dst)
	}
	var row store.Row
	for _, id := range slices.Sorted(maps.Keys(m.cits)) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := m.cits[id]
		texts.cits = append(texts.cits, c)
		row = store.Row{ID: id}
		if f&store.FieldRaw != 0 {
			row.Raw = d.Intern(store.FieldRaw, c.raw)
		}
		if k, ok := c.keys[policyDigest]; ok && f&store.FieldKey != 0 {
			row.Key = d.Intern(store.FieldKey, k)
		}
		row.Rejected = f&store.FieldKey != 0 && c.rejected[policyDigest]
		row.KeyContent = f&store.FieldKey != 0 && c.keyContent[policyDigest]
		if f&store.FieldEvidence != 0 {
			for _, e := range c.evidence {
				ev := store.Evidence{Retrieval: d.Intern(store.FieldRetrieval, e[0])}
				if e[1] != "" {
					ev.Content = d.Intern(store.FieldContent, e[1])
				}
				row.Evidence = append(row.Evidence, ev)
			}
			slices.SortFunc(row.Evidence, store.CompareEvidence)
		}
		row.Content = intern(nil, store.FieldContent, c.content)
		row.FinalURL = intern(nil, store.FieldFinalURL, c.finalURL)
		row.Canonical = intern(nil, store.FieldCanonical, c.canonical)
		row.Relations = intern(nil, store.FieldRelations, c.relations)
		row.Redirects = intern(nil, store.FieldFinalURL, c.redirects)
		row.Related = f&store.FieldRelations != 0 && c.related
		if err := fn(&row); err != nil {
			return nil, err
		}
	}
	return texts, nil
}

// memTexts is a Memory scan's Texts: its Dict, and the scanned citations
// for Citations.
type memTexts struct {
	*store.Dict
	m      *Memory
	f      store.Fields
	policy *store.PolicyRef // the scan's, nil if none is stored
	cits   []*memCitation   // by row
}

// Citations implements store.Texts: each citation is built from its
// record, as the record says it (Memory holds no extractions, passage
// checks or detected relations).
func (t *memTexts) Citations(rows []int32, dst []store.Citation) {
	if t.f&store.FieldCitation == 0 {
		return
	}
	for k, i := range rows {
		dst[k] = t.m.citation(t.cits[i], t.policy)
		if n := dst[k].Norm; n != nil {
			n.Steps = nil // a scan reads only the rules
		}
		dst[k].Under = nil
	}
}

// citation builds c as a backend hands it back, under pol (nil for none).
func (m *Memory) citation(c *memCitation, pol *store.PolicyRef) store.Citation {
	r := c.rec
	out := store.Citation{
		ID: r.ID(), Raw: c.raw, Engine: r.Engine, AnswerID: r.AnswerID, Question: r.Question,
		Position: string(r.Position), ObservedAt: r.ObservedAt, BaseURL: r.BaseURL,
	}
	if _, frag, ok := strings.Cut(c.raw, "#"); ok {
		out.Fragment = &frag
	}
	if pol != nil {
		if n := c.norms[pol.Digest]; n != nil {
			nn := *n
			nn.Policy = pol
			out.Norm = &nn
		}
	}
	if rt := r.Retrieval; rt != nil {
		ret := &store.Retrieval{
			Node: model.RetrievalIRI(c.raw, rt), RetrievedAt: rt.RetrievedAt, FinalURL: rt.FinalURL,
			FinalStatus: store.Integer(rt.FinalStatus), ContentHash: rt.ContentHash, ContentType: rt.ContentType,
			SnapshotRef: rt.SnapshotRef, Outcome: rt.Outcome, OutcomeError: rt.OutcomeError,
			Hops: []store.Hop{}, Canonicals: []model.Canonical{},
		}
		if rt.CanonicalDropped > 0 {
			ret.CanonicalDropped = store.Integer(strconv.Itoa(rt.CanonicalDropped))
		}
		for j, h := range rt.Hops {
			ret.Hops = append(ret.Hops, store.Hop{Hop: h, Index: j, CrossesHost: !sameHost([]model.Hop{h})})
		}
		ret.Canonicals = append(ret.Canonicals, rt.Canonical...)
		slices.SortFunc(ret.Canonicals, func(a, b model.Canonical) int { return cmpString(a.Source+a.URL, b.Source+b.URL) })
		out.Retrievals = []*store.Retrieval{ret}
	}
	for _, rel := range r.Relations {
		out.Relations = append(out.Relations, &store.Relation{Relation: rel, Evidence: model.EvidenceDeclared})
	}
	for d := range c.norms {
		if p, ok := m.policies[d]; ok {
			out.Under = append(out.Under, p.String())
		}
	}
	slices.Sort(out.Under)
	return out
}

// Check implements store.Checker: every id an index names is stored.
func (m *Memory) Check(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, idx := range []map[string][]string{m.raw, m.content} {
		for v, ids := range idx {
			for _, id := range ids {
				if _, ok := m.digest[id]; !ok {
					return fmt.Errorf("check: %q names citation %s, which is not stored", v, id)
				}
			}
		}
	}
	for k, ids := range m.key {
		for _, id := range ids {
			if _, ok := m.digest[id]; !ok {
				return fmt.Errorf("check: key %q names citation %s, which is not stored", k[1], id)
			}
		}
	}
	return ctx.Err()
}

// View implements store.Viewer: Memory's reads are consistent one by one
// (its lock), and fn reads Memory itself.
func (m *Memory) View(ctx context.Context, fn func(store.Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return fn(m)
}

// Citations implements store.Lookup.
func (m *Memory) Citations(ctx context.Context, policyDigest string, ids []string) ([]*store.Citation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pol *store.PolicyRef
	if p, ok := m.policies[policyDigest]; ok {
		pol = &p
	}
	out := make([]*store.Citation, len(ids))
	for i, id := range ids {
		if c := m.cits[id]; c != nil {
			v := m.citation(c, pol)
			out[i] = &v
		}
	}
	return out, ctx.Err()
}

// ByTextDigest implements store.Lookup: Memory holds no extractions
// (Append cannot write them), so nothing matches.
func (m *Memory) ByTextDigest(ctx context.Context, digest string) ([]string, error) {
	return nil, ctx.Err()
}

// ByFinalURL implements store.Lookup, retrievals in IRI order.
func (m *Memory) ByFinalURL(ctx context.Context, url string, fn func(ids []string) bool) error {
	m.mu.Lock()
	byRet := m.final[url]
	var groups [][]string
	for _, iri := range slices.Sorted(maps.Keys(byRet)) {
		groups = append(groups, found(byRet[iri]))
	}
	m.mu.Unlock()
	for _, ids := range groups {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !fn(ids) {
			return nil
		}
	}
	return ctx.Err()
}

// ByRelationTarget implements store.Lookup (declared relations only:
// detecting relations is the bbolt mapping's).
func (m *Memory) ByRelationTarget(ctx context.Context, target string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.target[target]), ctx.Err()
}
