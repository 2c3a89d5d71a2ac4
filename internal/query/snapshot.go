package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/vocab"
)

// PolicyRef identifies a normalization policy stored in the database.
type PolicyRef struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Digest  string `json:"digest"`
	node    string
	text    string
	lastRun time.Time
}

// String returns "name@version".
func (p PolicyRef) String() string { return p.Name + "@" + p.Version }

// Citation is one citation as stored, with what the queries need of it.
// Nothing here is derived or rewritten: every string is a stored literal.
type Citation struct {
	Node       string `json:"-"`
	ID         string `json:"citation_id"`
	Engine     string `json:"engine,omitempty"`
	AnswerID   string `json:"answer_id,omitempty"`
	Question   string `json:"question,omitempty"`
	Position   string `json:"position,omitempty"`
	ObservedAt string `json:"observed_at"`
	BaseURL    string `json:"base_url,omitempty"`
	Raw        string `json:"raw_url"`
	RawNode    string `json:"-"`
	Fragment   *string
	// Norm is the normalization under the snapshot's policy, nil when the
	// citation was never normalized under it.
	Norm       *Normalization
	Retrievals []*Retrieval
	Relations  []*Relation
}

// Normalization is one normalization of a raw URL.
type Normalization struct {
	Node          string
	Policy        PolicyRef
	Steps         []normalize.Step
	ErrorCode     string
	ErrorMessage  string
	Key           string
	Compare       string
	Parsed        string
	HostRule      string
	RemovedParams []string
}

// Rejected reports whether the policy rejected the raw URL.
func (n *Normalization) Rejected() bool { return n.ErrorCode != "" }

// Retrieval is one fetch of a raw URL.
type Retrieval struct {
	Node         string      `json:"-"`
	RetrievedAt  string      `json:"retrieved_at,omitempty"`
	FinalURL     string      `json:"final_url,omitempty"`
	FinalStatus  string      `json:"final_status,omitempty"`
	ContentHash  string      `json:"content_hash,omitempty"`
	ContentType  string      `json:"content_type,omitempty"`
	SnapshotRef  string      `json:"snapshot_ref,omitempty"`
	Outcome      string      `json:"outcome,omitempty"`
	OutcomeError string      `json:"outcome_error,omitempty"`
	Hops         []Hop       `json:"hops"`
	Canonicals   []Canonical `json:"canonical"`
}

// CrossesHost reports whether any hop changed host.
func (r *Retrieval) CrossesHost() bool {
	for _, h := range r.Hops {
		if h.CrossesHost {
			return true
		}
	}
	return false
}

// Hop is one redirect.
type Hop struct {
	Index       int    `json:"index"`
	From        string `json:"from"`
	To          string `json:"to"`
	Status      string `json:"status"`
	At          string `json:"at,omitempty"`
	CrossesHost bool   `json:"crosses_host"`
	Location    string `json:"location,omitempty"` // the Location header as received, when recorded
}

// Canonical is a canonical declaration as observed.
type Canonical struct {
	URL    string `json:"url"`
	Source string `json:"source"`
}

// Relation is a declared or detected relation of the cited resource.
type Relation struct {
	Type       string `json:"type"` // format_of, mirror_of, syndication_of, archive_of
	Target     string `json:"target"`
	Format     string `json:"format,omitempty"`
	CapturedAt string `json:"captured_at,omitempty"`
	Evidence   string `json:"evidence"` // declared or detected
}

// Snapshot is everything the queries read, loaded in one pass over the
// store. Loading reads; it never writes.
type Snapshot struct {
	Policies  []PolicyRef // every policy in the database, oldest first
	Policy    PolicyRef   // the policy the snapshot's normalizations are under
	Citations []*Citation // sorted by citation id
	norm      *normalize.Normalizer
	normErr   error
}

// ErrNoPolicy is returned by Load when the database holds no normalization
// under the requested policy (or no policy at all: an empty database).
var ErrNoPolicy = errors.New("no such policy in the database")

// Load reads the citations of st with their normalizations under policy,
// given as "name@version", "name", a digest, or "" for the policy of the
// most recent ingest run.
func Load(ctx context.Context, st *graph.Store, policy string) (*Snapshot, error) {
	l := loader{ctx: ctx, st: st}
	snap := &Snapshot{}
	pols, err := l.policies()
	if err != nil {
		return nil, err
	}
	snap.Policies = pols
	chosen, err := choosePolicy(pols, policy)
	if err != nil {
		return nil, err
	}
	snap.Policy = chosen
	if err := l.citations(snap); err != nil {
		return nil, err
	}
	return snap, nil
}

func choosePolicy(pols []PolicyRef, want string) (PolicyRef, error) {
	if len(pols) == 0 {
		return PolicyRef{}, fmt.Errorf("%w: the database has no normalization policy (is it empty?)", ErrNoPolicy)
	}
	if want == "" {
		return pols[len(pols)-1], nil
	}
	var names []string
	for _, p := range pols {
		if want == p.Digest || want == p.String() || want == p.Name+"@"+strings.SplitN(p.Version, "+", 2)[0] {
			return p, nil
		}
		names = append(names, p.String())
	}
	var byName []PolicyRef
	for _, p := range pols {
		if p.Name == want {
			byName = append(byName, p)
		}
	}
	if len(byName) > 0 {
		return byName[len(byName)-1], nil
	}
	return PolicyRef{}, fmt.Errorf("%w: %q (the database has %s)", ErrNoPolicy, want, strings.Join(names, ", "))
}

// Normalizer returns a normalizer for the snapshot's policy, rebuilt from
// the policy text stored in the database, to place URLs that were not
// cited (canonical and relation targets, redirect destinations) among the
// groups.
func (s *Snapshot) Normalizer() (*normalize.Normalizer, error) {
	if s.norm != nil || s.normErr != nil {
		return s.norm, s.normErr
	}
	if s.Policy.text == "" {
		s.normErr = fmt.Errorf("policy %s: the database does not hold its text", s.Policy)
		return nil, s.normErr
	}
	p, err := normalize.ParsePolicy([]byte(s.Policy.text), "database:"+s.Policy.String())
	if err == nil {
		s.norm, err = normalize.New(p, nil)
	}
	s.normErr = err
	return s.norm, err
}

// EngineChanged reports whether the running normalization engine differs
// from the one the snapshot's policy was applied with: keys computed now
// for uncited URLs could then differ from stored keys.
func (s *Snapshot) EngineChanged() bool {
	n, err := s.Normalizer()
	return err == nil && n.Policy().Digest() != s.Policy.Digest
}

type loader struct {
	ctx context.Context
	st  *graph.Store
}

// prop reads every (subject, object) of one predicate.
func (l *loader) prop(pred string) (map[string][]graph.Term, error) {
	m := map[string][]graph.Term{}
	err := l.st.Match(l.ctx, graph.Quad{P: graph.IRI(pred)}, func(q graph.Quad) error {
		m[q.S.Value] = append(m[q.S.Value], q.O)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("query: reading %s: %w", pred, err)
	}
	return m, nil
}

// props reads several predicates.
func (l *loader) props(preds ...string) (map[string]map[string][]graph.Term, error) {
	out := map[string]map[string][]graph.Term{}
	for _, p := range preds {
		m, err := l.prop(p)
		if err != nil {
			return nil, err
		}
		out[p] = m
	}
	return out, nil
}

func one(m map[string][]graph.Term, s string) string {
	if v := m[s]; len(v) > 0 {
		return v[0].Value
	}
	return ""
}

func (l *loader) subjects(class string) ([]string, error) {
	ts, err := l.st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(class))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Value
	}
	return out, nil
}

func (l *loader) policies() ([]PolicyRef, error) {
	nodes, err := l.subjects(vocab.NormalizationPolicy)
	if err != nil {
		return nil, err
	}
	p, err := l.props(vocab.PolicyName, vocab.PolicyVersion, vocab.PolicyDigest, vocab.PolicyText)
	if err != nil {
		return nil, err
	}
	// The most recent run that used each policy orders them.
	used, err := l.prop(vocab.ProvUsed)
	if err != nil {
		return nil, err
	}
	started, err := l.prop(vocab.ProvStartedAtTime)
	if err != nil {
		return nil, err
	}
	runs, err := l.subjects(vocab.IngestRun)
	if err != nil {
		return nil, err
	}
	last := map[string]time.Time{}
	for _, run := range runs {
		t, _ := time.Parse(time.RFC3339Nano, one(started, run))
		for _, u := range used[run] {
			if t.After(last[u.Value]) {
				last[u.Value] = t
			}
		}
	}
	var out []PolicyRef
	for _, n := range nodes {
		out = append(out, PolicyRef{
			Name: one(p[vocab.PolicyName], n), Version: one(p[vocab.PolicyVersion], n),
			Digest: one(p[vocab.PolicyDigest], n), node: n, text: one(p[vocab.PolicyText], n), lastRun: last[n],
		})
	}
	slices.SortFunc(out, func(a, b PolicyRef) int {
		if c := a.lastRun.Compare(b.lastRun); c != 0 {
			return c
		}
		return strings.Compare(a.Digest, b.Digest)
	})
	return out, nil
}

func (l *loader) citations(snap *Snapshot) error {
	nodes, err := l.subjects(vocab.Citation)
	if err != nil {
		return err
	}
	p, err := l.props(
		vocab.CitationId, vocab.Cites, vocab.ObservedAt, vocab.Position, vocab.Question, vocab.BaseURL,
		vocab.InAnswer, vocab.AnswerId, vocab.ProvWasAttributedTo, vocab.EngineName,
		vocab.Text, vocab.Fragment,
		vocab.NormalizedAs, vocab.ProvQualifiedAssociation, vocab.ProvHadPlan, vocab.Steps, vocab.ErrorCode, vocab.ErrorMessage,
		vocab.ProvWasGeneratedBy, vocab.Compare, vocab.Parsed, vocab.HostRule, vocab.RemovedParams,
		vocab.RetrievedIn, vocab.RetrievedAt, vocab.FinalURL, vocab.FinalStatus, vocab.ContentHash, vocab.ContentType,
		vocab.SnapshotRef, vocab.Outcome, vocab.OutcomeError, vocab.Hop, vocab.HopIndex, vocab.From, vocab.To,
		vocab.Status, vocab.At, vocab.CrossesHost, vocab.Location, vocab.DeclaredURL, vocab.SignalSource,
		vocab.QualifiedRelation, vocab.Target, vocab.Format, vocab.CapturedAt, vocab.Evidence,
	)
	if err != nil {
		return err
	}
	types, err := l.prop(vocab.RDFType)
	if err != nil {
		return err
	}
	// Which normalization is under the chosen policy, and which node is
	// each normalization's key and each retrieval's canonical declarations.
	policyOf := map[string]string{} // association -> policy node
	for assoc, plans := range p[vocab.ProvHadPlan] {
		policyOf[assoc] = plans[0].Value
	}
	keyOf := map[string]string{}     // normalization -> key node
	declsOf := map[string][]string{} // retrieval -> declarations
	for s, objs := range p[vocab.ProvWasGeneratedBy] {
		for _, o := range objs {
			switch {
			case hasType(types[s], vocab.ComparisonKey):
				keyOf[o.Value] = s
			case hasType(types[s], vocab.CanonicalDeclaration):
				declsOf[o.Value] = append(declsOf[o.Value], s)
			}
		}
	}
	text := p[vocab.Text]
	for _, n := range nodes {
		c := &Citation{
			Node: n, ID: one(p[vocab.CitationId], n),
			ObservedAt: one(p[vocab.ObservedAt], n), Position: one(p[vocab.Position], n),
			Question: one(p[vocab.Question], n), BaseURL: one(p[vocab.BaseURL], n),
		}
		if ans := one(p[vocab.InAnswer], n); ans != "" {
			c.AnswerID = one(p[vocab.AnswerId], ans)
			c.Engine = one(p[vocab.EngineName], one(p[vocab.ProvWasAttributedTo], ans))
		}
		c.RawNode = one(p[vocab.Cites], n)
		c.Raw = one(text, c.RawNode)
		if f, ok := p[vocab.Fragment][c.RawNode]; ok && len(f) > 0 {
			v := f[0].Value
			c.Fragment = &v
		}
		for _, nrm := range p[vocab.NormalizedAs][n] {
			assoc := one(p[vocab.ProvQualifiedAssociation], nrm.Value)
			if policyOf[assoc] != snap.Policy.node {
				continue
			}
			c.Norm = l.normalization(p, nrm.Value, keyOf[nrm.Value], snap.Policy)
		}
		for _, r := range p[vocab.RetrievedIn][n] {
			c.Retrievals = append(c.Retrievals, l.retrieval(p, text, r.Value, declsOf[r.Value]))
		}
		for _, rel := range p[vocab.QualifiedRelation][n] {
			c.Relations = append(c.Relations, relation(p, text, types[rel.Value], rel.Value))
		}
		slices.SortFunc(c.Retrievals, func(a, b *Retrieval) int { return strings.Compare(a.RetrievedAt+a.Node, b.RetrievedAt+b.Node) })
		slices.SortFunc(c.Relations, func(a, b *Relation) int {
			return strings.Compare(a.Type+"\x00"+a.Target+"\x00"+a.Evidence, b.Type+"\x00"+b.Target+"\x00"+b.Evidence)
		})
		snap.Citations = append(snap.Citations, c)
	}
	slices.SortFunc(snap.Citations, func(a, b *Citation) int { return strings.Compare(a.ID, b.ID) })
	return nil
}

func hasType(ts []graph.Term, class string) bool {
	for _, t := range ts {
		if t.Value == class {
			return true
		}
	}
	return false
}

func (l *loader) normalization(p map[string]map[string][]graph.Term, nrm, key string, pol PolicyRef) *Normalization {
	n := &Normalization{
		Node: nrm, Policy: pol,
		ErrorCode: one(p[vocab.ErrorCode], nrm), ErrorMessage: one(p[vocab.ErrorMessage], nrm),
	}
	_ = json.Unmarshal([]byte(one(p[vocab.Steps], nrm)), &n.Steps)
	if key != "" {
		n.Key = one(p[vocab.Text], key)
		n.Compare = one(p[vocab.Compare], key)
		n.Parsed = one(p[vocab.Parsed], key)
		n.HostRule = one(p[vocab.HostRule], key)
		_ = json.Unmarshal([]byte(one(p[vocab.RemovedParams], key)), &n.RemovedParams)
	}
	return n
}

func (l *loader) retrieval(p map[string]map[string][]graph.Term, text map[string][]graph.Term, r string, decls []string) *Retrieval {
	rt := &Retrieval{
		Node: r, RetrievedAt: one(p[vocab.RetrievedAt], r), FinalURL: one(p[vocab.FinalURL], r),
		FinalStatus: one(p[vocab.FinalStatus], r), ContentHash: one(p[vocab.ContentHash], r),
		ContentType: one(p[vocab.ContentType], r), SnapshotRef: one(p[vocab.SnapshotRef], r),
		Outcome: one(p[vocab.Outcome], r), OutcomeError: one(p[vocab.OutcomeError], r),
		Hops: []Hop{}, Canonicals: []Canonical{},
	}
	for _, h := range p[vocab.Hop][r] {
		idx, _ := strconv.Atoi(one(p[vocab.HopIndex], h.Value))
		rt.Hops = append(rt.Hops, Hop{
			Index: idx, From: one(p[vocab.From], h.Value), To: one(p[vocab.To], h.Value),
			Status: one(p[vocab.Status], h.Value), At: one(p[vocab.At], h.Value),
			CrossesHost: one(p[vocab.CrossesHost], h.Value) == "true",
			Location:    one(p[vocab.Location], h.Value),
		})
	}
	slices.SortFunc(rt.Hops, func(a, b Hop) int { return a.Index - b.Index })
	for _, d := range decls {
		rt.Canonicals = append(rt.Canonicals, Canonical{URL: one(p[vocab.DeclaredURL], d), Source: one(p[vocab.SignalSource], d)})
	}
	slices.SortFunc(rt.Canonicals, func(a, b Canonical) int { return strings.Compare(a.Source+a.URL, b.Source+b.URL) })
	return rt
}

var relationTypes = map[string]string{
	vocab.FormatRelation:      "format_of",
	vocab.MirrorRelation:      "mirror_of",
	vocab.SyndicationRelation: "syndication_of",
	vocab.ArchiveRelation:     "archive_of",
}

func relation(p map[string]map[string][]graph.Term, text map[string][]graph.Term, types []graph.Term, rel string) *Relation {
	r := &Relation{
		Target: one(text, one(p[vocab.Target], rel)), Format: one(p[vocab.Format], rel),
		CapturedAt: one(p[vocab.CapturedAt], rel), Evidence: one(p[vocab.Evidence], rel),
	}
	for _, t := range types {
		if name, ok := relationTypes[t.Value]; ok {
			r.Type = name
		}
	}
	return r
}
