package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/store"
)

// A bounded server (Options.Bounded) holds no group: every request reads
// what it shows from the database's grouping view and group records,
// which ingest keeps current, in memory bounded by the page.
//
//   - A queue page is a cursor range of the group records' queue (the
//     groups `provgraph groups` lists by default, in its order: by the
//     group's smallest key), its groups read from the view around their
//     ids (query.GroupsAround): milliseconds whatever the database size.
//     A verdict or domain filter reads on through the records, which
//     carry the verdict and every key, until the page is full
//     (boundedQueue), counting from the totals (by verdict, and by the
//     domain of any key then verdict, counted in the walk). Filters that
//     need what the records do not keep (engine, since, review state, an
//     order by risk or size, all=true) are refused with a message that
//     says so: they need a whole grouping, which is what `provgraph
//     groups` does and what would not fit.
//   - A group page, a decision and a lineage read the view around the
//     groups and citations they name, as `review show` and `review decide`
//     do; their answers are those of a server holding every group.
//   - What the server keeps is the decisions (review.Index: one per human
//     decision) and the totals of one walk of the records (groups, queued
//     groups and those by verdict, members of groups of two or more), computed at start and
//     after each ingest.
//   - The stats are the records' counts by verdict and the review counts;
//     the review counts are computed from the groups that decisions name
//     (read from the view) and the totals, and equal a full server's.
//   - The policy is fixed at start (the latest when none is given), so
//     that an ingest under another policy does not change what is served.
//
// A server that writes makes the records current at start (refreshing
// them, or building them: a whole grouping read from the view, 78 s and
// 1.4 GiB at ten million citations) and after each ingest; a read-only
// server refuses to start without them and says how to build them.

// boundedState is what a bounded server keeps of one committed state.
type boundedState struct {
	pol    store.PolicyRef
	ix     *review.Index
	totals citestore.RecordTotals
	// decided is the groups with a member that a decision about a group
	// names (review.Index.GroupDecided), found by the member's key in the
	// records: every other group is unreviewed, so a queue row needs its
	// group read only when it is one of these. decidedBy is those
	// citations, so that a decision adds only its own.
	decided   map[string]bool
	decidedBy map[string]bool
	// groups changes at each ingest through the server, not at a
	// decision (which changes no group): the member lineages of group
	// pages are cached per groups.
	groups *int
}

// boundedNow returns the bounded state the server serves now, computing
// it the first time.
func (s *Server) boundedNow(ctx context.Context) (*boundedState, error) {
	s.cmu.Lock()
	b := s.bs
	s.cmu.Unlock()
	if b != nil {
		return b, nil
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.cmu.Lock()
	b = s.bs
	s.cmu.Unlock()
	if b != nil {
		return b, nil
	}
	cs := citestore.New(s.st)
	pol, err := service.ViewPolicy(ctx, cs, s.o.Policy)
	if err != nil {
		return nil, err
	}
	ok, err := query.ViewUsable(ctx, cs, pol.Digest)
	if err != nil {
		return nil, service.QueryError(err)
	}
	if !ok {
		return nil, service.InputError{Err: fmt.Errorf("%s: policy %s: %w, which serving in bounded memory reads (write one with: provgraph view rebuild --db %s --policy %s)",
			s.o.DB, pol, service.ErrNoView, s.o.DB, pol.Digest)}
	}
	return s.loadBounded(ctx, pol, new(int))
}

// loadBounded makes the records of pol current (a read-only server only
// checks them), walks them and reads the decisions, and serves the
// result, with groups as its groups token.
func (s *Server) loadBounded(ctx context.Context, pol store.PolicyRef, groups *int) (*boundedState, error) {
	if err := s.recordsReady(ctx, pol); err != nil {
		return nil, err
	}
	t, err := citestore.New(s.st).Records(pol.Digest, s.o.MaxShared).Totals(ctx, service.DomainOfKey)
	if err != nil {
		return nil, service.QueryError(err)
	}
	ix, err := review.Load(ctx, s.st)
	if err != nil {
		return nil, err
	}
	b := &boundedState{pol: pol, ix: ix, totals: t, groups: groups, decided: map[string]bool{}, decidedBy: map[string]bool{}}
	if err := s.addDecided(ctx, b); err != nil {
		return nil, err
	}
	s.setBounded(b)
	return b, nil
}

// withDecisions returns the state after decisions: b with the decisions
// ix, whose groups with a decided member are b's and those of the
// citations the new decisions name.
func (s *Server) withDecisions(ctx context.Context, b *boundedState, ix *review.Index) (*boundedState, error) {
	nb := &boundedState{pol: b.pol, ix: ix, totals: b.totals, groups: b.groups, decided: maps.Clone(b.decided), decidedBy: maps.Clone(b.decidedBy)}
	return nb, s.addDecided(ctx, nb)
}

// addDecided adds to b.decided the groups of the citations that b.ix's
// group decisions name and b.decidedBy does not hold yet: each
// citation's key under the policy (one read), then its group in the
// records (one more).
func (s *Server) addDecided(ctx context.Context, b *boundedState) error {
	var ids []string
	for _, id := range b.ix.GroupDecided() {
		if !b.decidedBy[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	cs := citestore.New(s.st)
	cits, err := cs.Citations(ctx, b.pol.Digest, ids)
	if err != nil {
		return service.QueryError(err)
	}
	rs := cs.Records(b.pol.Digest, s.o.MaxShared)
	for i, c := range cits {
		b.decidedBy[ids[i]] = true
		if c == nil || c.Norm == nil || c.Norm.Key == "" {
			continue // not normalized under the policy: in no group
		}
		g, ok, err := rs.IDOfKey(ctx, c.Norm.Key)
		if err != nil {
			return service.QueryError(err)
		}
		if ok {
			b.decided[g] = true
		}
	}
	return nil
}

// queueRows is a page of the queue's rows (Server.queueRows).
type queueRows struct {
	pol   store.PolicyRef
	rows  []queueRow
	total int
	next  string
}

// boundedRows is the UI's page of the queue: each row from the group's
// record (id, verdict, members, smallest key, a relation to review),
// unreviewed unless the group has a decided member, whose groups alone
// are read to give their review state. A page is then a range of the
// records, whatever the size of the groups.
func (s *Server) boundedRows(ctx context.Context, f service.GroupFilter) (*queueRows, error) {
	if err := checkBounded(f); err != nil {
		return nil, err
	}
	b, err := s.boundedNow(ctx)
	if err != nil {
		return nil, err
	}
	v, err := s.pages.get(b, s.servedBounded(b), "rows "+f.Cursor+" "+strconv.Itoa(f.Limit)+" "+f.Verdict+" "+strings.ToLower(f.Domain), func() (any, error) {
		ctx := context.WithoutCancel(ctx) // other readers may wait for it
		recs, next, total, err := s.boundedQueue(ctx, b, f)
		if err != nil {
			return nil, err
		}
		q := &queueRows{pol: b.pol, total: total, next: next}
		var read []string
		for _, r := range recs {
			if b.decided[r.ID] {
				read = append(read, r.ID)
			}
		}
		var rv *service.Reviewed
		if len(read) > 0 {
			pol, gs, err := s.groupsAround(ctx, b.pol.Digest, read, nil)
			if err != nil {
				return nil, err
			}
			rv = service.Around(pol, gs, b.ix)
		}
		for _, r := range recs {
			if rv != nil {
				if g := rv.Group(r.ID); g != nil {
					q.rows = append(q.rows, rowOf(g, rv.Status(g)))
					continue
				}
			}
			q.rows = append(q.rows, queueRow{ID: r.ID, Verdict: r.Verdict, Key: r.Key, Members: r.Members, Relations: -1, Review: r.ReviewRelation,
				Status: &review.Status{State: review.StateUnreviewed}})
		}
		return q, nil
	})
	if err != nil {
		return nil, err
	}
	return v.(*queueRows), nil
}

func (s *Server) setBounded(b *boundedState) {
	s.cmu.Lock()
	s.bs = b
	s.cmu.Unlock()
}

// currentBounded reports whether groups is the groups token served now.
func (s *Server) currentBounded(groups *int) func() bool {
	return func() bool {
		s.cmu.Lock()
		defer s.cmu.Unlock()
		return s.bs != nil && s.bs.groups == groups
	}
}

// recordsReady makes sure the group records of pol under the server's
// --max-shared are complete and current. A server that writes refreshes
// them (service.KeepRecordsOf), or builds them when there are none; a
// read-only server says how to build them.
func (s *Server) recordsReady(ctx context.Context, pol store.PolicyRef) error {
	rs := citestore.New(s.st).Records(pol.Digest, s.o.MaxShared)
	usable := func() (bool, bool, error) {
		_, complete, _, err := rs.State(ctx)
		if err != nil || !complete {
			return false, false, err
		}
		dirty, err := rs.Dirty(ctx)
		return complete, dirty == 0, err
	}
	complete, current, err := usable()
	if err != nil {
		return service.QueryError(err)
	}
	if current {
		return nil
	}
	maxShared := s.o.MaxShared
	if s.o.ReadOnly {
		why := "no group records are kept"
		if complete {
			why = "the group records are behind a run that stopped before its end"
		}
		return service.InputError{Err: fmt.Errorf("%s: policy %s, --max-shared %d: %s, which a read-only server in bounded memory pages the queue from (%w); build them, then serve again: provgraph queue --build --db %s --policy %s --max-shared %d",
			s.o.DB, pol, maxShared, why, service.ErrNoRecords, s.o.DB, pol.Digest, maxShared)}
	}
	if complete {
		if _, err := service.KeepRecordsOf(ctx, s.st); err != nil {
			return err
		}
		if _, current, err = usable(); err != nil || current {
			return service.QueryError(err)
		}
	}
	s.notice(fmt.Sprintf("building the group records of policy %s, --max-shared %d (a whole grouping read from the grouping view: about 8 s a million citations)", pol, maxShared))
	n, err := service.BuildRecordsOf(ctx, s.st, pol.Digest, maxShared)
	if err != nil {
		return service.QueryError(err)
	}
	s.notice(fmt.Sprintf("group records built: %s", render.Plural(n, "group")))
	return nil
}

func (s *Server) notice(line string) {
	if s.o.Notice != nil {
		s.o.Notice(line)
	}
}

// errRecordsBusy is returned while the group records are incomplete: an
// ingest through the server changed more groups than a refresh takes, and
// the records are being built again (recordsReady), a minute or so at ten
// million citations. Readers are told to come back (503, Retry-After).
var errRecordsBusy = errors.New("the group records are being built again after an ingest through the server: try again in a minute")

// errBoundedFilter is wrapped by the refusal of a filter a bounded
// server cannot answer.
var errBoundedFilter = errors.New("not available while the server answers in bounded memory")

// checkBounded refuses the filters that select among every group.
func checkBounded(f service.GroupFilter) error {
	var off []string
	add := func(set bool, name string) {
		if set {
			off = append(off, name)
		}
	}
	add(!f.Queue, "all=true")
	add(f.Sort != "", "sort="+f.Sort)
	add(f.Engine != "", "engine")
	add(f.Since != "", "since")
	add(f.State != "", "state")
	if len(off) == 0 {
		return nil
	}
	return service.UsageError{Err: fmt.Errorf("%s: %w (serve --bounded, or a database past --state-mem): it pages the review queue in the groups' own order (by smallest key) and finds one group by id or key, and these select among every group. Stop the server and run provgraph groups with the same filters, or serve with a --state-mem that holds the database",
		strings.Join(off, ", "), errBoundedFilter)}
}

// boundedPage is a page of the queue, or the one group an id or key
// names, with the state it was read under.
func (s *Server) boundedPage(ctx context.Context, f service.GroupFilter) (*service.Reviewed, *service.Page, error) {
	if err := checkBounded(f); err != nil {
		return nil, nil, err
	}
	b, err := s.boundedNow(ctx)
	if err != nil {
		return nil, nil, err
	}
	opts := s.groupOptions()
	if f.ID != "" || f.Key != "" {
		name := f.ID
		if name == "" {
			name = f.Key
		}
		pol, gs, _, err := query.GroupsAround(ctx, citestore.New(s.st), b.pol.Digest, []string{name}, nil, opts)
		if err != nil {
			return nil, nil, service.QueryError(err)
		}
		rv := service.Around(pol, gs, b.ix)
		p := &service.Page{}
		rs := citestore.New(s.st).Records(b.pol.Digest, s.o.MaxShared)
		for _, g := range gs {
			if f.ID != "" && g.ID != f.ID || f.Key != "" && g.Key != f.Key && !slices.Contains(g.Keys, f.Key) {
				continue
			}
			// In the queue, as the records say: two members or more, or
			// either end of a relation to review.
			rec, ok, err := rs.Record(ctx, g.ID)
			if err != nil {
				return nil, nil, service.QueryError(err)
			}
			if ok && rec.Queued {
				p.Groups = append(p.Groups, g)
			}
		}
		p.Total = len(p.Groups)
		return rv, p, nil
	}
	recs, next, total, err := s.boundedQueue(ctx, b, f)
	if err != nil {
		return nil, nil, err
	}
	p := &service.Page{Total: total, Next: next}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.ID
	}
	pol, gs, err := s.groupsAround(ctx, b.pol.Digest, ids, nil)
	if err != nil {
		return nil, nil, err
	}
	rv := service.Around(pol, gs, b.ix)
	for _, id := range ids {
		g := rv.Group(id)
		if g == nil {
			return nil, nil, service.QueryError(fmt.Errorf("the group records name group %s, which the grouping view does not hold: the records are not current (build them again: provgraph queue --build --db %s)", id, s.o.DB))
		}
		p.Groups = append(p.Groups, g)
	}
	return rv, p, nil
}

// boundedScan is how many records a page of the queue with a verdict
// filter reads at a time until it has its groups: the records of a
// verdict may be far apart in the queue (a rare one: a few in a thousand).
const boundedScan = 1024

// boundedQueue reads a page of the queue from the group records: the
// f.Limit records after f.Cursor's (every one after it when f.Limit is
// 0), only those of f.Verdict when it is set, read on until the page is
// full or the queue ends; with the cursor of the next page ("" on the
// last) and how many records the queue, or its verdict, holds. The
// filter is checked already (service.GroupFilter.Check).
func (s *Server) boundedQueue(ctx context.Context, b *boundedState, f service.GroupFilter) ([]*store.GroupRecord, string, int, error) {
	after, err := service.DecodeAfterCursor(f.Cursor)
	if err != nil {
		return nil, "", 0, err
	}
	want := f.Limit
	if want > 0 {
		want++ // one more: is there a next page?
	}
	rs := citestore.New(s.st).Records(b.pol.Digest, s.o.MaxShared)
	var out []*store.GroupRecord
	domain := strings.ToLower(f.Domain)
	match := func(r *store.GroupRecord) bool {
		if f.Verdict != "" && r.Verdict != f.Verdict {
			return false
		}
		return domain == "" || slices.ContainsFunc(r.Keys, func(k string) bool { return service.DomainOfKey(k) == domain })
	}
	for {
		n := want
		if (f.Verdict != "" || domain != "") && n > 0 {
			n = max(n, boundedScan)
		}
		recs, complete, err := rs.CompleteQueue(ctx, after, n)
		if err == nil && !complete {
			err = errRecordsBusy
		}
		if errors.Is(err, store.ErrNoGroup) {
			return nil, "", 0, service.Usagef("cursor %q: the group it follows is no longer in the queue (start again from the first page)", f.Cursor)
		}
		if err != nil {
			return nil, "", 0, service.QueryError(err)
		}
		for _, r := range recs {
			if match(r) {
				out = append(out, r)
			}
		}
		if n <= 0 || len(recs) < n || len(out) >= want {
			break
		}
		after = recs[len(recs)-1].ID
	}
	total := b.totals.Queued
	switch {
	case domain != "" && f.Verdict != "":
		total = b.totals.QueuedByDomain[domain][f.Verdict]
	case domain != "":
		total = 0
		for _, n := range b.totals.QueuedByDomain[domain] {
			total += n
		}
	case f.Verdict != "":
		total = b.totals.QueuedByVerdict[f.Verdict]
	}
	next := ""
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
		next = service.EncodeAfterCursor(out[len(out)-1].ID)
	}
	return out, next, total, nil
}

// servedBounded reports whether b is the state served now.
func (s *Server) servedBounded(b *boundedState) func() bool {
	return func() bool {
		s.cmu.Lock()
		defer s.cmu.Unlock()
		return s.bs == b
	}
}

// apiGroupsBounded is GET /api/groups of a bounded server.
func (s *Server) apiGroupsBounded(w http.ResponseWriter, r *http.Request, f service.GroupFilter) {
	b, err := s.boundedNow(r.Context())
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	v, err := s.pages.get(b, s.servedBounded(b), "GET /api/groups?"+r.URL.Query().Encode(), func() (any, error) {
		// Only the encoded page is kept: its groups, every member with
		// its detail, take ten times its bytes.
		rv, p, err := s.boundedPage(context.WithoutCancel(r.Context()), f)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		err = render.ReviewedGroups(&buf, "json", render.ReviewedPage{Policy: rv.Report.Policy, Groups: p.Groups, Status: rv.Status, Total: p.Total, Next: p.Next})
		return buf.Bytes(), err
	})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(v.([]byte))
}

// boundedStats is GET /api/stats of a bounded server: what the group
// records count, and the review counts.
type boundedStats struct {
	Policy    query.PolicyRef `json:"policy"`
	Bounded   bool            `json:"bounded"`
	Groups    int             `json:"groups"`
	Queued    int             `json:"queued_groups"`
	ByVerdict map[string]int  `json:"groups_by_verdict"`
	Reviews   *review.Counts  `json:"reviews"`
}

// statsBounded counts from the records and the groups that decisions
// name: Reviewed.Counts' figures, with every group unreviewed but those.
func (s *Server) statsBounded(ctx context.Context) (*boundedStats, error) {
	b, err := s.boundedNow(ctx)
	if err != nil {
		return nil, err
	}
	// Once per served state: the groups with a decided member are read
	// whole, as many as the decisions name.
	v, err := s.pages.get(b, s.servedBounded(b), "stats", func() (any, error) {
		return s.countBounded(context.WithoutCancel(ctx), b)
	})
	if err != nil {
		return nil, err
	}
	return v.(*boundedStats), nil
}

// countBounded counts what statsBounded gives, for the state b.
func (s *Server) countBounded(ctx context.Context, b *boundedState) (*boundedStats, error) {
	counts, err := citestore.New(s.st).Records(b.pol.Digest, s.o.MaxShared).Counts(ctx)
	if err != nil {
		return nil, service.QueryError(err)
	}
	v := &boundedStats{Policy: b.pol, Bounded: true, Groups: b.totals.Groups, Queued: b.totals.Queued, ByVerdict: map[string]int{}}
	for k, n := range counts {
		if name, ok := strings.CutPrefix(k, "verdict:"); ok {
			v.ByVerdict[name] = n
		}
	}
	pol, gs, err := s.groupsAround(ctx, b.pol.Digest, slices.Sorted(maps.Keys(b.decided)), nil)
	if err != nil {
		return nil, err
	}
	reviewed := service.Around(pol, gs, b.ix).Counts()
	c := &review.Counts{Groups: b.totals.Groups, ByDecision: reviewed.ByDecision, Decisions: b.ix.Len(),
		Decided: reviewed.Decided, Stale: reviewed.Stale, Splits: reviewed.Splits, ConfirmedMembers: reviewed.ConfirmedMembers}
	// Every group the decisions do not name is unreviewed: the groups
	// less the reviewed, the duplicates' members less the reviewed ones'.
	c.Unreviewed = b.totals.Groups - reviewed.Decided - reviewed.Stale
	c.UnreviewedMembers = b.totals.DuplicateMembers
	for _, g := range gs {
		if len(g.Members) > 1 {
			c.UnreviewedMembers -= len(g.Members)
		}
	}
	c.UnreviewedMembers += reviewed.UnreviewedMembers
	v.Reviews = c
	return v, nil
}

// aroundChunk is how many groups or citations groupsAround reads between
// two looks at the file's mapped pages: a group of a hundred members at
// ten million citations maps some 30 MB of the file in large folios.
const aroundChunk = 8

// groupsAround is query.GroupsAround from the view of the policy with
// digest d, a chunk at a time, the file's mapped pages kept under the
// store's limit between chunks (graph.Store.TrimMapped).
func (s *Server) groupsAround(ctx context.Context, d string, ids, citations []string) (query.PolicyRef, []*query.Group, error) {
	var pol query.PolicyRef
	var out []*query.Group
	seen := map[string]bool{}
	for first := true; first || len(ids) > 0 || len(citations) > 0; first = false {
		n, m := min(len(ids), aroundChunk), min(len(citations), aroundChunk)
		p, gs, ok, err := query.GroupsAround(ctx, citestore.New(s.st), d, ids[:n], citations[:m], s.groupOptions())
		if err != nil {
			return pol, nil, service.QueryError(err)
		}
		if !ok {
			return pol, nil, service.InputError{Err: fmt.Errorf("policy %s: %w (write one with: provgraph view rebuild --db %s --policy %s)", d, service.ErrNoView, s.o.DB, d)}
		}
		pol = p
		for _, g := range gs {
			if !seen[g.ID] {
				seen[g.ID] = true
				out = append(out, g)
			}
		}
		ids, citations = ids[n:], citations[m:]
		s.st.TrimMapped()
	}
	return pol, out, nil
}

// groupOptions are the options a server reads groups with: every group
// (a group page may show a single citation), with the relations to
// review and each member's detail.
func (s *Server) groupOptions() query.GroupOptions {
	return query.GroupOptions{MaxShared: s.o.MaxShared, MinSize: 1, Review: true, Detail: true}
}
