package service

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Reviewed is the groups of a database with their review state: query's
// report, every stored decision, and each listed group's status.
type Reviewed struct {
	Report  *query.Report
	Index   *review.Index
	mu      sync.Mutex // guards status and targets: a server shares one Reviewed
	status  map[string]*review.Status
	byID    map[string]*query.Group
	targets map[string]bool           // groups that a relation to review points to
	orders  map[string][]*query.Group // the groups in each --sort order, made once
	queues  map[string][]*query.Group // the queue (Filter's Queue) in each order, made once
	members map[string]memberAt       // each listed citation's group and member, made the first time a pair needs it
	// around: the groups are only those asked for (LoadReviewedAround),
	// not every group.
	around bool
}

// memberAt is where a citation is listed.
type memberAt struct {
	g *query.Group
	m *query.Member
}

// member returns the listed group and member of a citation, or nils.
func (r *Reviewed) member(id string) (*query.Group, *query.Member) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at := r.membersLocked()[id]
	return at.g, at.m
}

// membersLocked returns where each listed citation is, finding it the
// first time; r.mu is held.
func (r *Reviewed) membersLocked() map[string]memberAt {
	if r.members == nil {
		r.members = map[string]memberAt{}
		for _, g := range r.Report.Groups {
			for _, m := range g.Members {
				r.members[m.CitationID] = memberAt{g, m}
			}
		}
	}
	return r.members
}

// ordered returns the groups in the order sort names ("" is query's),
// sorting them the first time only: a server pages through them on every
// request.
func (r *Reviewed) ordered(sort string) []*query.Group {
	if sort == "" {
		return r.Report.Groups
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if gs, ok := r.orders[sort]; ok {
		return gs
	}
	type keyed struct {
		g   *query.Group
		key int
	}
	ks := make([]keyed, len(r.Report.Groups))
	for i, g := range r.Report.Groups {
		ks[i] = keyed{g, len(g.Members)}
		if sort == "risk" {
			ks[i].key = Risk(g)
		}
	}
	slices.SortStableFunc(ks, func(a, b keyed) int { return cmp.Compare(b.key, a.key) })
	gs := make([]*query.Group, len(ks))
	for i, k := range ks {
		gs[i] = k.g
	}
	if r.orders == nil {
		r.orders = map[string][]*query.Group{}
	}
	r.orders[sort] = gs
	return gs
}

// inReviewRelation reports whether g is the source or the target of a
// relation that needs review.
func (r *Reviewed) inReviewRelation(g *query.Group) bool {
	r.mu.Lock()
	targets := r.reviewTargets()
	r.mu.Unlock()
	return inReviewRelation(g, targets)
}

func inReviewRelation(g *query.Group, targets map[string]bool) bool {
	return targets[g.ID] || slices.ContainsFunc(g.Relations, func(rel *query.GroupRelation) bool { return rel.Review })
}

// reviewTargets returns the groups a relation to review points to,
// finding them the first time; r.mu is held.
func (r *Reviewed) reviewTargets() map[string]bool {
	if r.targets == nil {
		r.targets = map[string]bool{}
		for _, o := range r.Report.Groups {
			for _, rel := range o.Relations {
				if rel.Review && rel.To != "" {
					r.targets[rel.To] = true
				}
			}
		}
	}
	return r.targets
}

// queue returns the groups of the review queue (Filter's Queue) in the
// order sort names, selecting them the first time only: every queue page
// a server answers starts from them, and a scan of every group per
// request, under the lock, was what made its pages slow under load.
func (r *Reviewed) queue(sort string) []*query.Group {
	gs := r.ordered(sort)
	r.mu.Lock()
	defer r.mu.Unlock()
	if q, ok := r.queues[sort]; ok {
		return q
	}
	targets := r.reviewTargets()
	q := []*query.Group{}
	for _, g := range gs {
		if len(g.Members) >= 2 || inReviewRelation(g, targets) {
			q = append(q, g)
		}
	}
	if r.queues == nil {
		r.queues = map[string][]*query.Group{}
	}
	r.queues[sort] = q
	return q
}

// Status returns the review status of a listed group.
func (r *Reviewed) Status(g *query.Group) *review.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s := r.status[g.ID]; s != nil {
		return s
	}
	s := r.Index.Status(review.EvidenceOf(g, r.Report.Policy.Digest))
	r.status[g.ID] = s
	return s
}

// Group returns the listed group with the id, or nil.
func (r *Reviewed) Group(id string) *query.Group { return r.byID[id] }

// LoadReviewed reads the groups of an open store under policy, and its
// decisions. It reads only; a server calls it on the store it holds.
func LoadReviewed(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions) (*Reviewed, error) {
	set, err := query.LoadGroups(ctx, citestore.New(st), policy, opts)
	if err != nil {
		return nil, QueryError(err)
	}
	rep, err := set.Report(ctx)
	if err != nil {
		return nil, err
	}
	ix, err := review.Load(ctx, st)
	if err != nil {
		return nil, err
	}
	r := &Reviewed{Report: rep, Index: ix, status: map[string]*review.Status{}, byID: map[string]*query.Group{}}
	for _, g := range rep.Groups {
		r.byID[g.ID] = g
	}
	return r, nil
}

// LoadReviewedAround is LoadReviewed holding only the groups that groups
// names (ids or keys) and the groups of the citations citations names,
// read from the grouping view when the database keeps one usable for the
// policy (query.GroupsAround: milliseconds whatever its size, where
// LoadReviewed groups every citation: 14 s and 2.3 GB at a million).
// Without one it is LoadReviewed. A decision about them (Decide), or their
// review state, is then what LoadReviewed's would be.
func LoadReviewedAround(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions, groups, citations []string) (*Reviewed, error) {
	return loadAround(ctx, st, policy, opts, groups, citations, true)
}

// ErrNoView says the database keeps no grouping view of the policy that
// this build can read.
var ErrNoView = errors.New("the database keeps no grouping view of the policy that this build can read")

// ViewReviewedAround is LoadReviewedAround that never groups the whole
// database: without a usable view it returns an InputError wrapping
// ErrNoView. A server answering in bounded memory reads through it.
func ViewReviewedAround(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions, groups, citations []string) (*Reviewed, error) {
	return loadAround(ctx, st, policy, opts, groups, citations, false)
}

// loadAround is LoadReviewedAround; whole says whether, without a view,
// every group is loaded instead.
func loadAround(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions, groups, citations []string, whole bool) (*Reviewed, error) {
	pol, gs, ok, err := query.GroupsAround(ctx, citestore.New(st), policy, groups, citations, opts)
	if err != nil {
		return nil, QueryError(err)
	}
	if !ok {
		if !whole {
			return nil, InputError{fmt.Errorf("policy %q: %w (write one with provgraph view rebuild)", policy, ErrNoView)}
		}
		return LoadReviewed(ctx, st, policy, opts)
	}
	ix, err := review.Load(ctx, st)
	if err != nil {
		return nil, err
	}
	return Around(pol, gs, ix), nil
}

// Around returns the review state of the groups gs under pol with the
// decisions ix: a Reviewed holding only them, as LoadReviewedAround's.
func Around(pol query.PolicyRef, gs []*query.Group, ix *review.Index) *Reviewed {
	r := &Reviewed{Report: &query.Report{Policy: pol, Groups: gs}, Index: ix, status: map[string]*review.Status{}, byID: map[string]*query.Group{}, around: true}
	for _, g := range gs {
		r.byID[g.ID] = g
	}
	return r
}

// ShowReviewed returns the group with id (or key) and, around it, the
// groups that the decisions about its pairs and relations name, for a
// group's page (Reviewed.Subjects); from the grouping view when the
// database keeps one (LoadReviewedAround), else from every group. The
// group is nil when none has the id.
func ShowReviewed(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions, id string) (*Reviewed, *query.Group, error) {
	return showReviewed(ctx, st, policy, opts, id, true)
}

// ViewShowReviewed is ShowReviewed that never groups the whole database:
// without a usable view it returns an InputError wrapping ErrNoView.
func ViewShowReviewed(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions, id string) (*Reviewed, *query.Group, error) {
	return showReviewed(ctx, st, policy, opts, id, false)
}

func showReviewed(ctx context.Context, st *graph.Store, policy string, opts query.GroupOptions, id string, whole bool) (*Reviewed, *query.Group, error) {
	r, err := loadAround(ctx, st, policy, opts, []string{id}, nil, whole)
	if err != nil {
		return nil, nil, err
	}
	g := r.Group(id)
	if g == nil || !r.around {
		return r, g, nil
	}
	ids := make([]string, 0, len(g.Members))
	for _, m := range g.Members {
		ids = append(ids, m.CitationID)
	}
	var groups, citations []string
	for _, d := range r.Index.Subjects(ids, g.ID) {
		citations = append(citations, d.Citations...)
		for _, other := range []string{d.GroupID, d.RelatedTo} {
			if other != "" && r.Group(other) == nil {
				groups = append(groups, other)
			}
		}
	}
	if len(groups) == 0 && len(citations) == 0 {
		return r, g, nil
	}
	more, err := loadAround(ctx, st, policy, opts, append(groups, id), citations, whole)
	if err != nil {
		return nil, nil, err
	}
	return more, more.Group(id), nil
}

func (d DB) Reviewed(ctx context.Context, policy string, opts query.GroupOptions) (*Reviewed, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return LoadReviewed(ctx, st, policy, opts)
}

// DecideRequest asks for a decision about the group GroupID, about the
// pair of citations Citations (Subject review.SubjectPair), or about the
// relation from the group GroupID to the group RelatedTo (Subject
// review.SubjectRelation).
type DecideRequest struct {
	Subject   string // "" (a group), or a review.Subjects
	GroupID   string
	Citations []string // about a pair: the two citation ids
	Decision  string
	Relation  string
	RelatedTo string
	Rationale string
	Reviewer  string
}

// ErrNoGroup reports a group id no listed group has.
var ErrNoGroup = errors.New("no such group")

// Decide records a decision about one group of r in st, which must be
// open for writing and hold r's data. A wrong request is Usage; a group
// that does not exist is Rejected (an HTTP handler answers 404 for
// ErrNoGroup). The decision is committed when Decide returns.
func Decide(ctx context.Context, st review.Writer, r *Reviewed, req DecideRequest, now time.Time) (*review.Decision, error) {
	var rr review.Request
	switch req.Subject {
	case "", review.SubjectGroup:
		g, err := r.groupRequest(req)
		if err != nil {
			return nil, err
		}
		rr = g
	case review.SubjectPair:
		if len(req.Citations) != 2 || req.Citations[0] == req.Citations[1] {
			return nil, Usagef("a pair is two different citation ids, got %q", req.Citations)
		}
		if req.GroupID != "" || req.RelatedTo != "" {
			return nil, Usagef("a decision about a pair of citations names no group")
		}
		var ms [2]*query.Member
		var nodes []string
		for i, id := range req.Citations {
			if _, ms[i] = r.member(id); ms[i] == nil {
				return nil, InputError{fmt.Errorf("citation %q: %w listed under policy %s (an unknown id, or a raw URL the policy rejected)", id, query.ErrNoCitation, r.Report.Policy.String())}
			}
			nodes = append(nodes, review.NodeOf(ms[i]))
		}
		rr = review.Request{Subject: review.SubjectPair, Evidence: review.PairEvidence(ms[0], ms[1], r.Report.Policy.Digest), CitationNodes: nodes}
	case review.SubjectRelation:
		var gs [2]*query.Group
		for i, id := range []string{req.GroupID, req.RelatedTo} {
			if gs[i] = r.Group(id); gs[i] == nil {
				return nil, InputError{fmt.Errorf("%w %q under policy %s", ErrNoGroup, id, r.Report.Policy.String())}
			}
		}
		if gs[0] == gs[1] {
			return nil, Usagef("a relation is between two different groups, got %s twice", req.GroupID)
		}
		rr = review.Request{Subject: review.SubjectRelation, GroupID: gs[0].ID, GroupKey: gs[0].Key, RelatedTo: gs[1].ID, RelatedKey: gs[1].Key,
			Evidence: review.RelationEvidence(gs[0], gs[1], r.Report.Policy.Digest), CitationNodes: append(review.NodesOf(gs[0]), review.NodesOf(gs[1])...)}
	default:
		return nil, Usagef("subject %q: want one of %s", req.Subject, strings.Join(review.Subjects, ", "))
	}
	rr.Decision, rr.Relation, rr.Rationale, rr.Reviewer = req.Decision, req.Relation, req.Rationale, req.Reviewer
	d, err := review.Record(ctx, st, rr, now)
	if errors.Is(err, review.ErrInvalid) {
		return nil, UsageError{err}
	}
	return d, err
}

// groupRequest returns the request of a decision about a group.
func (r *Reviewed) groupRequest(req DecideRequest) (review.Request, error) {
	if len(req.Citations) > 0 {
		return review.Request{}, Usagef("a decision about a group names no citations")
	}
	g := r.Group(req.GroupID)
	if g == nil {
		return review.Request{}, InputError{fmt.Errorf("%w %q under policy %s", ErrNoGroup, req.GroupID, r.Report.Policy.String())}
	}
	if req.RelatedTo != "" && r.Group(req.RelatedTo) == nil {
		return review.Request{}, UsageError{fmt.Errorf("related_to: %w %q", ErrNoGroup, req.RelatedTo)}
	}
	return review.Request{
		RelatedTo: req.RelatedTo, GroupID: g.ID, GroupKey: g.Key, Evidence: review.EvidenceOf(g, r.Report.Policy.Digest),
		CitationNodes: review.NodesOf(g),
	}, nil
}

// Subjects returns the review state of each pair of citations with a
// member of g and of each relation with g at either end that a decision
// is about, newest first: what a group's page lists apart from the
// group's own decisions.
func (r *Reviewed) Subjects(g *query.Group) []*review.SubjectStatus {
	ids := make([]string, 0, len(g.Members))
	for _, m := range g.Members {
		ids = append(ids, m.CitationID)
	}
	out := []*review.SubjectStatus{}
	for _, d := range r.Index.Subjects(ids, g.ID) {
		out = append(out, r.SubjectStatus(d))
	}
	return out
}

// SubjectStatus returns the review state of the pair or relation that d
// is about, from the evidence of today.
func (r *Reviewed) SubjectStatus(d *review.Decision) *review.SubjectStatus {
	var missing []string
	var ev review.Evidence
	pol := r.Report.Policy.Digest
	if d.Subject == review.SubjectPair {
		var ms []*query.Member
		for _, id := range d.Citations {
			if _, m := r.member(id); m != nil {
				ms = append(ms, m)
			} else {
				missing = append(missing, fmt.Sprintf("citation %s is in no listed group now", id))
			}
		}
		if len(ms) == 2 {
			ev = review.PairEvidence(ms[0], ms[1], pol)
		}
	} else {
		a, b := r.Group(d.GroupID), r.Group(d.RelatedTo)
		for _, e := range []struct {
			id string
			g  *query.Group
		}{{d.GroupID, a}, {d.RelatedTo, b}} {
			if e.g == nil {
				missing = append(missing, fmt.Sprintf("group %s is not listed now (its key changed, or its members left)", e.id))
			}
		}
		if a != nil && b != nil {
			ev = review.RelationEvidence(a, b, pol)
		}
	}
	return r.Index.SubjectStatus(d, ev, missing)
}

// GroupFilter selects, orders and pages the groups of a Reviewed, as
// groups --id/--key/--domain/--engine/--since/--state/--sort/--limit and
// GET /api/groups take them. The zero value lists every group in query's
// order.
type GroupFilter struct {
	ID      string // the group with this id
	Key     string // groups with this key among their keys
	Domain  string // groups with a member key under this registrable domain
	Engine  string // groups with a member cited by this engine
	Since   string // groups with a member observed at or after this time (RFC 3339)
	Verdict string
	State   string // review.StateUnreviewed, StateDecided or StateStale
	Sort    string // "" (query's order), "size" (largest first) or "risk"
	Limit   int    // at most this many; 0 means no limit
	Cursor  string // the Next of the page before
	// Queue selects the groups a reviewer works through: those with at
	// least two members and those in a relation that needs review, as
	// source or target (groups' defaults).
	Queue bool
}

// Page is one page of filtered groups.
type Page struct {
	Groups []*query.Group
	Total  int    // how many groups the filter selects, on every page
	Next   string // the cursor of the next page, "" on the last
}

// Check validates the filter; its errors are Usage and name the field.
func (f GroupFilter) Check() error {
	if f.State != "" && !slices.Contains(review.States, f.State) {
		return Usagef("state %q: want one of %s", f.State, strings.Join(review.States, ", "))
	}
	if f.Sort != "" && f.Sort != "size" && f.Sort != "risk" {
		return Usagef("sort %q: want size or risk", f.Sort)
	}
	if f.Since != "" {
		if _, err := time.Parse(time.RFC3339, f.Since); err != nil {
			if _, err := time.Parse(time.DateOnly, f.Since); err != nil {
				return Usagef("since %q: want an RFC 3339 time (2026-11-02T09:00:00Z) or a date (2026-11-02)", f.Since)
			}
		}
	}
	if f.Limit < 0 {
		return Usagef("limit %d: want 0 (no limit) or more", f.Limit)
	}
	if _, err := decodeCursor(f.Cursor); err != nil {
		if _, aerr := DecodeAfterCursor(f.Cursor); aerr != nil {
			return err
		}
	}
	if f.Verdict != "" && !slices.ContainsFunc(model.Verdicts, func(v model.Verdict) bool { return v.Name == f.Verdict }) {
		return Usagef("verdict %q: not a verdict of the codebook", f.Verdict)
	}
	return nil
}

// cursors are "o" and the offset of the next group, base64url: opaque to
// callers, and valid for the same data and filter.
func decodeCursor(c string) (int, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && len(b) > 1 && b[0] == 'o' {
		if n, err := strconv.Atoi(string(b[1:])); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, Usagef("cursor %q: not a cursor this server gave (use the next value of the page before)", c)
}

func encodeCursor(n int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("o" + strconv.Itoa(n)))
}

// EncodeAfterCursor returns the cursor of the page after the group with
// id, for a listing that pages by group (the group records' queue):
// "a" and the id, base64url, as opaque as the offsets of Filter.
func EncodeAfterCursor(id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte("a" + id))
}

// DecodeAfterCursor returns the group id of a cursor EncodeAfterCursor
// made ("" for no cursor); any other cursor is Usage.
func DecodeAfterCursor(c string) (string, error) {
	if c == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil && len(b) > 1 && b[0] == 'a' {
		return string(b[1:]), nil
	}
	return "", Usagef("cursor %q: not a cursor this server gave (use the next value of the page before)", c)
}

// Risk orders groups for review: conflicts first, then groups with a
// relation that needs review (cross-host redirects and relations), then
// needs-content-check, then larger groups first.
func Risk(g *query.Group) (score int) {
	switch g.Verdict {
	case model.VerdictConflict:
		score += 1 << 30
	case model.VerdictNeedsContentCheck:
		score += 1 << 26
	}
	for _, r := range g.Relations {
		if r.Review {
			score += 1 << 28
			break
		}
	}
	return score + min(len(g.Members), 1<<25)
}

// Filter returns the page of groups f selects.
func (r *Reviewed) Filter(f GroupFilter) (*Page, error) {
	if err := f.Check(); err != nil {
		return nil, err
	}
	off, err := decodeCursor(f.Cursor)
	if err != nil {
		return nil, err
	}
	match := f.selector()
	base := r.ordered(f.Sort)
	if f.Queue {
		base = r.queue(f.Sort)
	}
	// With no filter but the queue, the page is a slice of base.
	sel := base
	if match.any() {
		sel = nil
		for _, g := range base {
			if match.match(g, r.Status) {
				sel = append(sel, g)
			}
		}
	}
	p := &Page{Total: len(sel)}
	if off > len(sel) {
		off = len(sel)
	}
	end := len(sel)
	if f.Limit > 0 && off+f.Limit < end {
		end = off + f.Limit
		p.Next = encodeCursor(end)
	}
	p.Groups = sel[off:end]
	return p, nil
}

// domainOf returns the registrable domain of a key's host.
// DomainOfKey returns the registrable domain of the host of a key,
// lower case, "" when it has none: what a domain filter compares.
func DomainOfKey(key string) string { return domainOf(key) }

func domainOf(key string) string {
	i := strings.Index(key, "://")
	if i < 0 {
		return ""
	}
	h := key[i+3:]
	if j := strings.IndexAny(h, "/?#"); j >= 0 {
		h = h[:j]
	}
	if j := strings.LastIndexByte(h, '@'); j >= 0 {
		h = h[j+1:]
	}
	return strings.ToLower(query.RegistrableDomain(h))
}

// Counts returns the review counts of the listed groups with at least two
// members (the duplicates) and of the groups in a relation to review.
func (r *Reviewed) Counts() *review.Counts {
	c := &review.Counts{ByDecision: map[string]int{}, Decisions: r.Index.Len()}
	for _, g := range r.Report.Groups {
		countGroup(c, g, r.Status(g))
	}
	return c
}

// countGroup counts group g, with review status s, into c.
func countGroup(c *review.Counts, g *query.Group, s *review.Status) {
	c.Groups++
	switch s.State {
	case review.StateUnreviewed:
		c.Unreviewed++
		if len(g.Members) > 1 {
			c.UnreviewedMembers += len(g.Members)
		}
		return
	case review.StateStale:
		c.Stale++
	default:
		c.Decided++
	}
	c.ByDecision[s.Latest.Decision]++
	switch {
	case s.Latest.Decision == review.Different:
		c.Splits++
	case s.Latest.Decision == review.Same && s.State == review.StateDecided && len(g.Members) > 1:
		c.ConfirmedMembers += len(g.Members)
	}
}

// errFound stops a Match at its first quad.
var errFound = errors.New("found")

// HasDecisions reports whether the database holds any decision, so that
// groups shows review states only where there are some.
func (d DB) HasDecisions(ctx context.Context) (bool, error) {
	st, err := d.Open(true)
	if err != nil {
		return false, err
	}
	defer st.Close()
	err = st.Match(ctx, graph.Quad{P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.Adjudication)}, func(graph.Quad) error { return errFound })
	if errors.Is(err, errFound) {
		return true, nil
	}
	return false, err
}

// ExplainState lists the groups in a review state (stats --explain
// review-state:S): each group's key with its latest decision, and its
// citations.
func (r *Reviewed) ExplainState(state string) ([]query.ExplainLine, error) {
	if err := checkState(state); err != nil {
		return nil, err
	}
	lines := []query.ExplainLine{}
	for _, g := range r.Report.Groups {
		if s := r.Status(g); s.State == state {
			lines = append(lines, stateLine(g, s))
		}
	}
	return lines, nil
}

// checkState refuses a review state that is not one.
func checkState(state string) error {
	if !slices.Contains(review.States, state) {
		return Usagef("--explain review-state:%s: want one of %s", state, strings.Join(review.States, ", "))
	}
	return nil
}

// stateLine is the line of ExplainState for group g in review state s.
func stateLine(g *query.Group, s *review.Status) query.ExplainLine {
	item := g.Key
	if s.Latest != nil {
		item += " (" + s.Latest.Decision + " by " + s.Latest.Reviewer + ", " + s.Latest.ID + ")"
	}
	l := query.ExplainLine{Item: item, Group: g.ID}
	for _, m := range g.Members {
		l.Members = append(l.Members, m.CitationID)
	}
	return l
}

// ExplainReviewState is stats --explain review-state:S: the groups the
// review queue lists (groups' defaults, --max-shared maxShared) in review
// state S, each with its latest decision, read as how says and judged as
// they are written (ReviewedSet.Write), their lines spooled to disk in
// tmp: from the grouping view, memory is the view read's and the
// decisions', not every citation's. The lines are ExplainState's on every
// group held.
func (d DB) ExplainReviewState(ctx context.Context, policy string, maxShared int, state string, how GroupsRead, tmp string) (*query.LineSpool, error) {
	if err := checkState(state); err != nil {
		return nil, err
	}
	rs, err := d.ReviewedFrom(ctx, policy, query.GroupOptions{MaxShared: maxShared, MinSize: 2, Review: true}, how)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	sp, err := query.NewLineSpool(tmp)
	if err != nil {
		return nil, err
	}
	_, err = rs.Write(ctx, GroupFilter{State: state}, func(buf []byte, g *query.Group, s *review.Status) []byte {
		b, _ := json.Marshal(stateLine(g, s)) // strings and a slice of them always marshal
		return append(buf, b...)
	}, func(b []byte) error {
		var l query.ExplainLine
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		return sp.Add(l)
	})
	if err == nil {
		err = sp.Done()
	}
	if err != nil {
		sp.Close()
		return nil, QueryError(err)
	}
	sp.Policy, sp.Warnings = rs.Set.Policy(), rs.Set.Warnings()
	return sp, nil
}

// WithDecision returns the same groups with the decisions of ix, which
// holds those of r and d: what a server serves after recording d, which
// changes no group. It keeps the review states already computed of the
// groups d is not about (d about a pair or a relation changes none):
// at a million citations computing every group's state again took
// seconds, paid by the first page filtered by state after each decision.
func (r *Reviewed) WithDecision(ix *review.Index, d *review.Decision) *Reviewed {
	n := r.WithIndex(ix)
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := map[string]bool{}
	if d.Subject == review.SubjectGroup {
		at := r.membersLocked()
		for _, c := range d.Citations {
			if g := at[c].g; g != nil {
				changed[g.ID] = true
			}
		}
	}
	n.members = r.members
	for id, st := range r.status {
		if !changed[id] {
			n.status[id] = st
		}
	}
	return n
}

// WithIndex returns the same groups with the decisions of ix: what a
// server serves after recording a decision, which changes no group.
func (r *Reviewed) WithIndex(ix *review.Index) *Reviewed {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Reviewed{Report: r.Report, Index: ix, status: map[string]*review.Status{}, byID: r.byID, targets: r.targets, orders: r.orders, queues: r.queues, members: r.members}
}
