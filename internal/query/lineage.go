package query

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Scopes of the review group reported with a lineage.
const (
	// ScopeNeighbourhood computes the group from the citations that can
	// affect it, found by index lookups: those with the citation's key, the
	// keys its same-host redirects lead to, the citations that may redirect
	// into one of the group's keys (those whose retrieval ended at a URL
	// written exactly as the key, and those whose own key differs from it
	// only by http/https or a trailing slash), and the citations sharing a
	// content hash with a member, and the groups of the keys the group's
	// relations point to (so that they carry the ids Groups gives them;
	// not those of a content hash whose sharers have more than MaxShared
	// keys, which is no evidence unless redirects join their groups).
	// It reads a few dozen nodes per citation
	// involved, so its cost depends on the size of the group, not of the
	// database. It misses one thing that Groups over the whole database
	// sees: any other same-host redirect into the group that ends at a URL
	// written differently from the key it normalizes to (with a tracking
	// parameter, an upper-case host, ...), because the database has no
	// index from a resolved URL's key to the URL. Such a redirect can add
	// members to the group and turn its verdict into needs-content-check.
	ScopeNeighbourhood = "neighbourhood"
	// ScopeDatabase loads a Snapshot of the whole database and runs Groups
	// on it, exactly as the groups command does. Its cost grows with the
	// database (seconds for tens of thousands of citations).
	ScopeDatabase = "database"
	// ScopeView is the scope a lineage reports when ScopeNeighbourhood was
	// asked and the database keeps a grouping view of the policy: the
	// group is read from the view as GroupOf reads it (the group's
	// component, the groups sharing its evidence and those its relations
	// point at), which gives the group exactly as Groups over the whole
	// database does, redirects written differently from their key
	// included, at the cost of the group's neighbourhood. It is not asked
	// for: a database without a usable view falls back to the index
	// lookups of ScopeNeighbourhood.
	ScopeView = "view"
)

// ErrNoCitation is returned by LineageOf and LineageOfURL when no citation
// has the given id or raw URL.
var ErrNoCitation = errors.New("no citation")

// LineageOptions configures LineageOf and LineageOfURL. A nil
// *LineageOptions means the zero value, which means the defaults.
type LineageOptions struct {
	// Policy is the policy whose normalization and group are reported, as
	// for Load: "name@version", "name", a digest, or "" for the policy of the
	// most recent ingest run.
	Policy string
	// MaxShared is as in GroupOptions; zero means model.DefaultMaxShared.
	MaxShared int
	// Scope is ScopeNeighbourhood (also the meaning of "") or
	// ScopeDatabase.
	Scope string
}

// Lineage is everything the database holds about one citation, in the
// order it happened: the observation, the normalization of its raw URL under
// one policy, its retrievals with every redirect hop, canonical
// declarations and content hashes, its relations to other resources, and
// the review group it falls in with the reasons. Every string is a stored
// literal, except the group, which is derived as Groups derives it.
type Lineage struct {
	CitationID string  `json:"citation_id"`
	Engine     string  `json:"engine,omitempty"`
	AnswerID   string  `json:"answer_id,omitempty"`
	Position   Integer `json:"position,omitempty"` // the lexical form stored
	Question   string  `json:"question,omitempty"`
	ObservedAt string  `json:"observed_at"`
	RawURL     string  `json:"raw_url"`
	Fragment   *string `json:"fragment"` // nil when the raw URL has no "#"
	BaseURL    string  `json:"base_url,omitempty"`
	// ResolvedURL is the final URL of the latest retrieval that has one.
	ResolvedURL string `json:"resolved_url,omitempty"`
	// Key is the comparison key under Policy; empty when the raw URL was
	// rejected or never normalized under it.
	Key string `json:"key,omitempty"`
	// Policy is the policy the normalization and the group are under.
	Policy PolicyRef `json:"policy"`
	// Normalization is nil when the citation was never normalized under
	// Policy; NormalizedUnder then says which policies it was.
	Normalization   *LineageNormalization `json:"normalization"`
	NormalizedUnder []string              `json:"normalized_under"`
	Retrievals      []*Retrieval          `json:"retrievals"`
	Relations       []*Relation           `json:"relations"`
	// ContentHashes are the distinct content hashes of the retrievals.
	ContentHashes []string `json:"content_hashes"`
	// Passage is the check of the citation's cited_text against its latest
	// successful extraction, as groups' members carry it; nil when there
	// is none (each retrieval's extractions are in Retrievals).
	Passage *Passage `json:"passage,omitempty"`
	// Group is nil when the citation is in no group; Ungrouped says why.
	Group     *LineageGroup `json:"group"`
	Ungrouped string        `json:"ungrouped,omitempty"`
	Warnings  []string      `json:"warnings,omitempty"`
}

// LineageNormalization is the normalization of a raw URL under one policy.
type LineageNormalization struct {
	// Steps are every transformation in sequence order.
	Steps         []normalize.Step `json:"steps"`
	Compare       string           `json:"compare,omitempty"`
	Parsed        string           `json:"parsed,omitempty"` // absent when equal to the raw URL
	HostRule      string           `json:"host_rule,omitempty"`
	RemovedParams []string         `json:"removed_params"`
	// Error is the rejection; nil when the policy accepted the raw URL.
	Error *NormalizationError `json:"error,omitempty"`
}

// NormalizationError is a rejection by a policy, as stored.
type NormalizationError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// LineageGroup is the review group a citation falls in.
type LineageGroup struct {
	ID      string   `json:"id"`
	Key     string   `json:"key"`
	Keys    []string `json:"keys,omitempty"` // every key when a redirect joined several
	Verdict string   `json:"verdict"`
	Members int      `json:"members"`
	// Reasons say why this citation is in the group, as Member.Reasons.
	Reasons []string `json:"reasons"`
	// Relations are the group's relations to other groups and uncited
	// URLs, exactly as Groups lists them for the group.
	Relations []*GroupRelation `json:"relations"`
	// Scope is ScopeNeighbourhood or ScopeDatabase; Read is how many
	// citations the group was computed from.
	Scope string `json:"scope"`
	Read  int    `json:"citations_read"`
}

// LineageOf returns the lineage of the citation with the given id. It
// reads the citation and the group as opts.Scope says, through src (on
// one view of it, when src is a store.Viewer); it never writes. An
// unknown id is ErrNoCitation.
func LineageOf(ctx context.Context, src store.Reader, citationID string, opts *LineageOptions) (*Lineage, error) {
	ls, err := LineagesOf(ctx, src, []string{citationID}, opts)
	if err != nil {
		return nil, err
	}
	return ls[0], nil
}

// LineagesOf returns the lineages of the citations with the given ids, in
// the order of ids, each as LineageOf returns it, from one view and one
// exploration of their neighbourhood: the members of one group share it,
// and a page that shows them side by side would otherwise explore it once
// per member. An unknown id is ErrNoCitation.
func LineagesOf(ctx context.Context, src store.Reader, citationIDs []string, opts *LineageOptions) ([]*Lineage, error) {
	out := make([]*Lineage, len(citationIDs))
	err := readWith(ctx, src, func(r *reader) error {
		ls, err := r.lineages(citationIDs, opts)
		copy(out, ls)
		return err
	})
	return out, err
}

// reader is a lineage's reading: the backend's view, and the citations
// read on it, by id, under the lineage's policy (a neighbourhood meets
// the same citations by key, content and redirect): those it shows whole,
// and the members of its neighbourhood, read lean when the backend can
// (memberLookup).
type reader struct {
	ctx     context.Context
	lk      store.Reader
	cits    map[string]*Citation
	members map[string]*Citation
}

// memberLookup is a backend that can read citations lean, with only what
// Groups reads of a citation to place it and to say what its group is
// (its key, retrievals' evidence, redirects, canonical declarations and
// relations; not its answer, engine, observation, step log, passage
// checks, hop or extraction details), as citestore's Members does. A
// lineage shows of the rest of its neighbourhood only the group it
// makes, which those fields decide whole, and the neighbourhood of a
// large group is hundreds of citations. A backend without it is read
// with Citations.
type memberLookup interface {
	Members(ctx context.Context, policyDigest string, ids []string) ([]*Citation, error)
}

// readWith runs fn with a reader on one view of src (store.Viewer), so
// that the many small reads of a lineage share one read transaction and
// what it read.
func readWith(ctx context.Context, src store.Reader, fn func(*reader) error) error {
	run := func(v store.Reader) error {
		return fn(&reader{ctx: ctx, lk: v, cits: map[string]*Citation{}, members: map[string]*Citation{}})
	}
	if v, ok := src.(store.Viewer); ok {
		return v.View(ctx, run)
	}
	return run(src)
}

// citations returns the citations with the given ids under pol, in their
// order (nil for an id not stored), reading those not read yet at once.
func (r *reader) citations(ids []string, pol PolicyRef) ([]*Citation, error) {
	var missing []string
	for _, id := range ids {
		if _, ok := r.cits[id]; !ok && !slices.Contains(missing, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		cs, err := r.lk.Citations(r.ctx, pol.Digest, missing)
		if err != nil {
			return nil, fmt.Errorf("query: reading citations: %w", err)
		}
		for i, id := range missing {
			r.cits[id] = cs[i]
		}
	}
	out := make([]*Citation, len(ids))
	for i, id := range ids {
		out[i] = r.cits[id]
	}
	return out, nil
}

// neighbours returns the citations with the given ids under pol as
// citations does, read lean (memberLookup) unless already read whole.
func (r *reader) neighbours(ids []string, pol PolicyRef) ([]*Citation, error) {
	ml, ok := r.lk.(memberLookup)
	if !ok {
		return r.citations(ids, pol)
	}
	var missing []string
	for _, id := range ids {
		if _, ok := r.cits[id]; ok {
			continue
		}
		if _, ok := r.members[id]; !ok {
			r.members[id] = nil // noted, so that a repeated id is read once
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		cs, err := ml.Members(r.ctx, pol.Digest, missing)
		if err != nil {
			return nil, fmt.Errorf("query: reading citations: %w", err)
		}
		for i, id := range missing {
			r.members[id] = cs[i]
		}
	}
	out := make([]*Citation, len(ids))
	for i, id := range ids {
		if c, ok := r.cits[id]; ok {
			out[i] = c
		} else {
			out[i] = r.members[id]
		}
	}
	return out, nil
}

// LineageOfURL returns the lineage of every citation whose raw URL is
// exactly raw, sorted by citation id. The text is matched byte for byte,
// without normalization: it is evidence. No such citation is
// ErrNoCitation. The citations are found with ByRaw.
func LineageOfURL(ctx context.Context, src store.Reader, raw string, opts *LineageOptions) ([]*Lineage, error) {
	var out []*Lineage
	err := readWith(ctx, src, func(r *reader) (err error) {
		out, err = r.lineagesOfURL(raw, opts)
		return err
	})
	return out, err
}

func (r *reader) lineagesOfURL(raw string, opts *LineageOptions) ([]*Lineage, error) {
	ids, err := r.lk.ByRaw(r.ctx, raw)
	if err != nil {
		return nil, fmt.Errorf("query: citations of raw URL %q: %w", raw, err)
	}
	if len(ids) == 0 {
		// Why not: what else the text is stored as, for the message.
		other, err := r.usesOf(raw)
		if err != nil {
			return nil, err
		}
		hint := ""
		if len(other) > 0 {
			hint = fmt.Sprintf(" (the text is stored as %s, but no answer showed it exactly)", strings.Join(other, " and "))
		}
		return nil, fmt.Errorf("%w of raw URL %q%s", ErrNoCitation, raw, hint)
	}
	return r.lineages(ids, opts)
}

// usesOf names what else a text is stored as: a comparison key (under any
// policy), a resolved URL (a retrieval's final URL), a related resource
// (a relation's target), sorted.
func (r *reader) usesOf(text string) ([]string, error) {
	var out []string
	pols, err := r.lk.Policies(r.ctx)
	if err != nil {
		return nil, err
	}
	for _, p := range pols {
		ids, err := r.lk.ByKey(r.ctx, p.Digest, text)
		if err != nil {
			return nil, err
		}
		if len(ids) > 0 {
			out = append(out, "a comparison key")
			break
		}
	}
	resolved := false
	if err := r.lk.ByFinalURL(r.ctx, text, func([]string) bool { resolved = true; return false }); err != nil {
		return nil, err
	}
	if resolved {
		out = append(out, "a resolved URL")
	}
	ids, err := r.lk.ByRelationTarget(r.ctx, text)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		out = append(out, "a related resource")
	}
	return out, nil
}

// lineages builds the lineage of each citation, by id, in the order of
// ids. An unknown id is ErrNoCitation.
func (r *reader) lineages(ids []string, opts *LineageOptions) ([]*Lineage, error) {
	var o LineageOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxShared <= 0 {
		o.MaxShared = model.DefaultMaxShared
	}
	switch o.Scope {
	case "":
		o.Scope = ScopeNeighbourhood
	case ScopeNeighbourhood, ScopeDatabase:
	default:
		return nil, fmt.Errorf("query: unknown group scope %q (want %s or %s)", o.Scope, ScopeNeighbourhood, ScopeDatabase)
	}
	snap, err := choose(r.ctx, r.lk, o.Policy)
	if err != nil {
		return nil, err
	}
	pol := snap.Policy
	cits, err := r.citations(ids, pol)
	if err != nil {
		return nil, err
	}
	for i, c := range cits {
		if c == nil {
			return nil, fmt.Errorf("%w with id %q", ErrNoCitation, ids[i])
		}
	}
	sorted := slices.Clone(cits)
	slices.SortFunc(sorted, func(a, b *Citation) int { return strings.Compare(a.ID, b.ID) })
	sorted = slices.CompactFunc(sorted, func(a, b *Citation) bool { return a == b })

	if o.Scope == ScopeNeighbourhood {
		vs, err := r.viewSource(snap)
		if err != nil {
			return nil, err
		}
		if vs != nil {
			return r.viewLineages(vs, snap, cits, o.MaxShared)
		}
	}
	if o.Scope == ScopeDatabase {
		full, err := Load(r.ctx, r.lk, pol.Digest)
		if err != nil {
			return nil, err
		}
		snap = full
	} else {
		h := newHood(r, snap, o.MaxShared)
		if err := h.explore(sorted); err != nil {
			return nil, err
		}
		snap.Citations = h.citations()
	}
	rep := Groups(snap, GroupOptions{MaxShared: o.MaxShared})
	place := func(c *Citation) (*LineageGroup, error) {
		for _, g := range rep.Groups {
			for _, m := range g.Members {
				if m.CitationID == c.ID {
					return &LineageGroup{
						ID: g.ID, Key: g.Key, Keys: g.Keys, Verdict: g.Verdict, Members: len(g.Members),
						Reasons: m.Reasons, Relations: g.Relations, Scope: o.Scope, Read: len(snap.Citations),
					}, nil
				}
			}
		}
		return nil, nil
	}
	out := make([]*Lineage, 0, len(cits))
	for _, c := range cits {
		l, err := r.lineage(c, pol, rep.Warnings, place)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// viewSource returns the backend as a ViewSource when it keeps a grouping
// view of snap's policy that this build can read as GroupOf does (the
// view's URL postings are keys of the engine the policy's keys were made
// with); nil otherwise.
func (r *reader) viewSource(snap *Snapshot) (ViewSource, error) {
	vs, ok := r.lk.(ViewSource)
	if !ok || snap.Policy.Digest == "" {
		return nil, nil
	}
	has, err := vs.HasView(r.ctx, snap.Policy.Digest)
	if err != nil {
		return nil, fmt.Errorf("query: grouping view of policy %s: %w", snap.Policy, err)
	}
	if _, nerr := snap.Normalizer(); !has || nerr != nil || snap.EngineChanged() {
		return nil, nil
	}
	return vs, nil
}

// viewLineages builds the lineages of cits with their groups read from
// vs's grouping view (ScopeView), once per key.
func (r *reader) viewLineages(vs ViewSource, snap *Snapshot, cits []*Citation, maxShared int) ([]*Lineage, error) {
	type placed struct {
		g    *grouping
		gr   *group
		out  *Group
		read int       // rows read
		rows []ViewRow // the rows of the key
	}
	byKey := map[string]*placed{}
	// The grouping's warnings: a usable view means a policy this build
	// can rebuild with the same engine, so only the incomplete runs warn.
	warnings := runWarnings(incompleteRuns(snap.Runs))
	place := func(c *Citation) (*LineageGroup, error) {
		key := c.Norm.Key
		p := byKey[key]
		if p == nil {
			opts := GroupOptions{MaxShared: maxShared}
			n, cache, err := gather(r.ctx, vs, snap, key, opts)
			if err != nil {
				return nil, err
			}
			if ml, ok := vs.(memberLookup); ok {
				cache.lean = ml
			}
			// The related members' rows' records hold what their
			// relations are made of: they are not read.
			cache.members = true
			f, err := viewFacts(n, cache)
			if err != nil {
				return nil, err
			}
			g := newGrouping(f, snap, opts)
			ref, ok := g.keyIndex[key]
			if !ok || g.groupOfKey[ref] < 0 {
				return nil, fmt.Errorf("query: the grouping view has no row under key %q, which citation %s has (rebuild the view): %w", key, c.ID, store.ErrDamaged)
			}
			gr := g.groups[g.groupOfKey[ref]]
			// Built as an unlisted group is: its relations, from its
			// related members alone; the members' count is the group's.
			out := g.build(0, gr, false)
			if err := cache.failed(); err != nil {
				return nil, err
			}
			p = &placed{g: g, gr: gr, out: out, read: f.n, rows: n.rows[key]}
			byKey[key] = p
		}
		if !slices.ContainsFunc(p.rows, func(v ViewRow) bool { return v.CitationID == c.ID }) {
			return nil, fmt.Errorf("query: the grouping view has no row of citation %s under its key %q (rebuild the view): %w", c.ID, key, store.ErrDamaged)
		}
		rs := &reasoner{g: p.out, shared: p.g.shared, maxShared: p.g.maxShared}
		reasons := rs.reasons(c)
		if p.gr.why != "" {
			reasons = append(reasons, p.gr.why)
		}
		return &LineageGroup{
			ID: p.out.ID, Key: p.out.Key, Keys: p.out.Keys, Verdict: p.out.Verdict, Members: len(p.gr.members),
			Reasons: reasons, Relations: p.out.Relations, Scope: ScopeView, Read: p.read,
		}, nil
	}
	out := make([]*Lineage, 0, len(cits))
	for _, c := range cits {
		l, err := r.lineage(c, snap.Policy, warnings, place)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// lineage assembles the report of one citation; place finds the group of
// a keyed citation (nil: none).
func (r *reader) lineage(c *Citation, pol PolicyRef, warnings []string, place func(*Citation) (*LineageGroup, error)) (*Lineage, error) {
	l := &Lineage{
		CitationID: c.ID, Engine: c.Engine, AnswerID: c.AnswerID, Position: Integer(c.Position),
		Question: c.Question, ObservedAt: c.ObservedAt, RawURL: c.Raw, Fragment: c.Fragment,
		BaseURL: c.BaseURL, ResolvedURL: resolved(c), Policy: pol,
		NormalizedUnder: c.Under, Retrievals: c.Retrievals, Relations: c.Relations,
		ContentHashes: []string{}, Warnings: warnings, Passage: passage(c),
	}
	if l.NormalizedUnder == nil {
		l.NormalizedUnder = []string{}
	}
	if l.Retrievals == nil {
		l.Retrievals = []*Retrieval{}
	}
	if l.Relations == nil {
		l.Relations = []*Relation{}
	}
	for _, rt := range c.Retrievals {
		if rt.ContentHash != "" && !slices.Contains(l.ContentHashes, rt.ContentHash) {
			l.ContentHashes = append(l.ContentHashes, rt.ContentHash)
		}
	}
	switch n := c.Norm; {
	case n == nil:
		l.Ungrouped = "never normalized under policy " + pol.String()
		return l, nil
	case n.Rejected():
		l.Normalization = lineageNorm(n)
		l.Ungrouped = fmt.Sprintf("the policy rejected the raw URL (%s): a rejected URL is never grouped", n.ErrorCode)
		return l, nil
	default:
		l.Normalization = lineageNorm(n)
		l.Key = n.Key
	}
	g, err := place(c)
	if err != nil {
		return nil, err
	}
	if g == nil {
		l.Ungrouped = "not found among the groups" // cannot happen: every keyed citation is grouped
	}
	l.Group = g
	return l, nil
}

func lineageNorm(n *Normalization) *LineageNormalization {
	ln := &LineageNormalization{
		Steps: n.Steps, Compare: n.Compare, Parsed: n.Parsed, HostRule: n.HostRule,
		RemovedParams: n.RemovedParams,
	}
	if ln.Steps == nil {
		ln.Steps = []normalize.Step{}
	}
	if ln.RemovedParams == nil {
		ln.RemovedParams = []string{}
	}
	if n.Rejected() {
		ln.Error = &NormalizationError{Code: n.ErrorCode, Message: n.ErrorMessage}
	}
	return ln
}

// hood finds the neighbourhood of a group (see ScopeNeighbourhood): the
// citations that Groups needs to place the given ones exactly as it would
// over the whole database, except for redirects into the group from URLs
// written differently from its keys.
type hood struct {
	r         *reader
	snap      *Snapshot
	keyOf     func(string) string
	maxShared int
	cits      map[string]*Citation
	order     []*Citation                // cits in load order
	byKey     map[string][]*Citation     // loaded citations by key
	into      map[string]map[string]bool // redirect target key -> source keys, among the loaded citations
	members   map[string]bool            // keys whose citations are loaded
	incoming  map[string]bool            // keys whose exact-text redirect sources are loaded
	inGroup   map[string]bool            // keys whose groups are loaded (the citations' own, then their relations' targets)
}

func newHood(r *reader, snap *Snapshot, maxShared int) *hood {
	h := &hood{
		r: r, snap: snap, maxShared: maxShared, cits: map[string]*Citation{},
		byKey: map[string][]*Citation{}, into: map[string]map[string]bool{},
		members: map[string]bool{}, incoming: map[string]bool{}, inGroup: map[string]bool{},
	}
	// The same key function as Groups: exact text when the policy cannot
	// be rebuilt.
	norm, err := snap.Normalizer()
	h.keyOf = func(u string) string {
		if err != nil {
			return u
		}
		res, err := norm.Normalize(u)
		if err != nil {
			return ""
		}
		return res.Key
	}
	return h
}

func (h *hood) citations() []*Citation {
	out := slices.Clone(h.order)
	slices.SortFunc(out, func(a, b *Citation) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func keyed(c *Citation) bool { return c.Norm != nil && !c.Norm.Rejected() }

// targets returns the keys c's same-host redirects lead to, as Groups
// computes them.
func (h *hood) targets(c *Citation) []string {
	var out []string
	if !keyed(c) {
		return nil
	}
	for _, rt := range c.Retrievals {
		if len(rt.Hops) == 0 || rt.FinalURL == "" || rt.CrossesHost() {
			continue
		}
		if t := h.keyOf(rt.FinalURL); t != "" && t != c.Norm.Key && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// add puts citation c into the neighbourhood.
func (h *hood) add(c *Citation) error {
	if c == nil || h.cits[c.ID] != nil {
		return nil
	}
	h.cits[c.ID] = c
	h.order = append(h.order, c)
	if !keyed(c) {
		return nil
	}
	h.byKey[c.Norm.Key] = append(h.byKey[c.Norm.Key], c)
	for _, t := range h.targets(c) {
		if h.into[t] == nil {
			h.into[t] = map[string]bool{}
		}
		h.into[t][c.Norm.Key] = true
	}
	return nil
}

// explore loads the neighbourhood of the given citations.
func (h *hood) explore(cits []*Citation) error {
	var queue []string
	join := func(k string) {
		if k != "" && !h.inGroup[k] {
			h.inGroup[k] = true
			queue = append(queue, k)
		}
	}
	for _, c := range cits {
		if err := h.add(c); err != nil {
			return err
		}
		if keyed(c) {
			join(c.Norm.Key)
		}
	}
	if err := h.grow(&queue, join); err != nil {
		return err
	}
	group := maps.Clone(h.inGroup)
	// Content hashes of the group's members: Groups counts the groups that
	// share each one, and a hash shared too widely is no evidence.
	var hashes []string
	for _, c := range h.order {
		if !keyed(c) || !group[c.Norm.Key] {
			continue
		}
		for _, rt := range c.Retrievals {
			if rt.ContentHash != "" && !slices.Contains(hashes, rt.ContentHash) {
				hashes = append(hashes, rt.ContentHash)
			}
		}
	}
	for _, hash := range hashes {
		ids, err := h.r.lk.ByContent(h.r.ctx, hash)
		if err != nil {
			return fmt.Errorf("query: citations of content hash %s: %w", hash, err)
		}
		if err := h.addIDs(ids); err != nil {
			return err
		}
	}
	// Main texts: the retrievals whose current extraction has the text
	// digest of a member's successful retrieval (same-text relations; a
	// near-identical text has no index to be found by, and is seen only
	// with --group-scope database).
	var digests []string
	for _, c := range h.order {
		if !keyed(c) || !group[c.Norm.Key] {
			continue
		}
		for _, rt := range c.Retrievals {
			if d, _, _ := textEvidence(rt); d != "" && rt.Successful() && !slices.Contains(digests, d) {
				digests = append(digests, d)
			}
		}
	}
	for _, d := range digests {
		ids, err := h.r.lk.ByTextDigest(h.r.ctx, d)
		if err != nil {
			return fmt.Errorf("query: citations of text digest %s: %w", d, err)
		}
		if err := h.addIDs(ids); err != nil {
			return err
		}
	}
	// joinSharers joins the groups of the keys outside the group that have
	// a citation with a retrieval that shares (the evidence the caller
	// tests), unless they are more than maxShared (a common page: no
	// relation).
	joinSharers := func(shares func(rt *Retrieval) bool) {
		var keys []string
		for _, c := range h.order {
			if !keyed(c) || group[c.Norm.Key] || slices.Contains(keys, c.Norm.Key) {
				continue
			}
			if slices.ContainsFunc(c.Retrievals, shares) {
				keys = append(keys, c.Norm.Key)
			}
			if len(keys) > h.maxShared {
				return
			}
		}
		for _, k := range keys {
			join(k)
		}
	}
	for _, d := range digests {
		joinSharers(func(rt *Retrieval) bool {
			td, _, _ := textEvidence(rt)
			return td == d && rt.Successful()
		})
	}
	// The groups the group's relations point to, whole, so that each is
	// named by the id Groups gives it: the groups of the content hash
	// sharers, and of the keys of redirect, canonical and relation
	// targets. A hash whose sharers have more keys than maxShared is
	// taken for a common page (no relation), and its sharers' groups are
	// not read: a soft-404 page can be shared by half the database.
	for _, hash := range hashes {
		joinSharers(func(rt *Retrieval) bool { return rt.ContentHash == hash })
	}
	for _, c := range slices.Clone(h.order) {
		if !keyed(c) || !group[c.Norm.Key] {
			continue
		}
		for _, rt := range c.Retrievals {
			if rt.FinalURL != "" && len(rt.Hops) > 0 {
				join(h.keyOf(rt.FinalURL))
			}
			for _, cn := range rt.Canonicals {
				join(h.keyOf(cn.URL))
			}
		}
		for _, rel := range c.Relations {
			join(h.keyOf(rel.Target))
		}
	}
	return h.grow(&queue, join)
}

// grow loads every key in the groups of the queued keys: its citations,
// the redirects into it, and the targets of its citations' redirects that
// are not shared too widely (Groups joins a target with its sources only
// then).
func (h *hood) grow(queue *[]string, join func(string)) error {
	for len(*queue) > 0 {
		k := (*queue)[0]
		*queue = (*queue)[1:]
		if err := h.loadMembers(k); err != nil {
			return err
		}
		if err := h.loadIncoming(k); err != nil {
			return err
		}
		if src := h.into[k]; len(src) <= h.maxShared {
			for _, s := range sortedKeys(src) {
				join(s)
			}
		}
		for _, c := range h.byKey[k] {
			for _, t := range h.targets(c) {
				if err := h.loadIncoming(t); err != nil {
					return err
				}
				if len(h.into[t]) <= h.maxShared {
					join(t)
				}
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// loadMembers loads the citations whose key under the policy is k.
func (h *hood) loadMembers(k string) error {
	if h.members[k] {
		return nil
	}
	h.members[k] = true
	ids, err := h.r.lk.ByKey(h.r.ctx, h.snap.Policy.Digest, k)
	if err != nil {
		return fmt.Errorf("query: citations of key %q: %w", k, err)
	}
	return h.addIDs(ids)
}

// addIDs loads the citations with the given ids, lean (reader.neighbours):
// the citations the lineage shows were read whole before.
func (h *hood) addIDs(ids []string) error {
	cs, err := h.r.neighbours(ids, h.snap.Policy)
	if err != nil {
		return err
	}
	for _, c := range cs {
		if err := h.add(c); err != nil {
			return err
		}
	}
	return nil
}

// loadIncoming loads the citations whose same-host redirects may end at
// key k: those whose retrieval ended at a URL written exactly as k, and
// those whose key is k with the other of http and https or with a trailing
// slash added or removed (the usual same-host redirects, which keep the
// tracking parameters of the request, so that the final URL is not written
// as its key). It stops once more than maxShared keys redirect to k:
// Groups then joins none of them to k, whatever the others are.
func (h *hood) loadIncoming(k string) error {
	if h.incoming[k] {
		return nil
	}
	h.incoming[k] = true
	for _, v := range redirectSources(k) {
		if len(h.into[k]) > h.maxShared {
			return nil
		}
		if err := h.loadMembers(v); err != nil {
			return err
		}
	}
	var err error
	ferr := h.r.lk.ByFinalURL(h.r.ctx, k, func(ids []string) bool {
		if len(h.into[k]) > h.maxShared {
			return false
		}
		err = h.addIDs(ids)
		return err == nil
	})
	if ferr != nil {
		return fmt.Errorf("query: citations retrieved at %q: %w", k, ferr)
	}
	return err
}

// redirectSources returns the keys from which a same-host redirect to key
// k is common: the other scheme of http and https (RFC 9110 §4.2.2 makes
// them distinct origins, and servers redirect from one to the other), and
// the path with a trailing slash added or removed (a server redirects a
// directory to its slash form), alone and together.
func redirectSources(k string) []string {
	var schemes []string
	switch {
	case strings.HasPrefix(k, "https://"):
		schemes = []string{"https://", "http://"}
	case strings.HasPrefix(k, "http://"):
		schemes = []string{"http://", "https://"}
	default:
		return nil
	}
	rest := k[len(schemes[0]):]
	path, query := rest, ""
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		path, query = rest[:i], rest[i:]
	}
	paths := []string{path}
	if strings.HasSuffix(path, "/") {
		if strings.Count(path, "/") > 1 { // not the root path of the host
			paths = append(paths, strings.TrimSuffix(path, "/"))
		}
	} else if strings.Contains(path, "/") {
		paths = append(paths, path+"/")
	}
	var out []string
	for _, s := range schemes {
		for _, p := range paths {
			if v := s + p + query; v != k {
				out = append(out, v)
			}
		}
	}
	return out
}
