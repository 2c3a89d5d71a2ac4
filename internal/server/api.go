package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
)

// apiError is the body of every API error.
type apiError struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// statusOf maps an error to its HTTP status: service.Classify's kind,
// with the not-found and too-large cases told apart.
func statusOf(err error) int {
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, service.ErrNoGroup) && service.Classify(err) == service.Rejected, errors.Is(err, query.ErrNoCitation):
		return http.StatusNotFound
	case errors.Is(err, graph.ErrQuery):
		return http.StatusBadRequest
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout
	case errors.Is(err, errRecordsBusy):
		return http.StatusServiceUnavailable
	}
	return service.Classify(err).HTTPStatus()
}

// fail answers an error: JSON under /api/, an HTML page elsewhere.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, status int, err error) {
	if status == 0 {
		status = statusOf(err)
	}
	kind := service.Classify(err).String()
	if status == http.StatusNotFound {
		kind = "not-found"
	}
	if errors.Is(err, errRecordsBusy) {
		kind = "busy"
		w.Header().Set("Retry-After", "60")
	}
	if strings.HasPrefix(r.URL.Path, "/api/") {
		writeJSON(w, status, apiError{Error: err.Error(), Kind: kind})
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	s.tpl.ExecuteTemplate(w, "error.html", map[string]any{"Status": status, "Text": http.StatusText(status), "Error": err.Error(), "Page": page{Title: "Error"}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	render.JSON(w, v)
}

// filterOf reads the groups filter of a request's query string.
func filterOf(r *http.Request) (service.GroupFilter, error) {
	q := r.URL.Query()
	f := service.GroupFilter{
		ID: q.Get("id"), Key: q.Get("key"), Domain: q.Get("domain"), Engine: q.Get("engine"), Since: q.Get("since"),
		Verdict: q.Get("verdict"), State: q.Get("state"), Sort: q.Get("sort"), Cursor: q.Get("cursor"), Limit: DefaultPageSize,
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxPageSize {
			return f, service.Usagef("limit %q: want a number from 1 to %d", v, MaxPageSize)
		}
		f.Limit = n
	}
	if q.Get("all") != "true" {
		f.Queue = true
	}
	return f, f.Check()
}

// GET /api/groups: a page of groups with their review state.
func (s *Server) apiGroups(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if r.URL.Query().Get("summary") == "true" {
		s.apiSummary(w, r, f)
		return
	}
	if s.o.Bounded {
		s.apiGroupsBounded(w, r, f)
		return
	}
	rv, err := s.reviewed(r.Context())
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	// The page is encoded once per state and query: every reader of the
	// queue asks for the same first pages.
	b, err := s.pages.get(rv, s.current(rv), "GET /api/groups?"+r.URL.Query().Encode(), func() (any, error) {
		p, err := rv.Filter(f)
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		err = render.ReviewedGroups(&b, "json", render.ReviewedPage{Policy: rv.Report.Policy, Groups: p.Groups, Status: rv.Status, Total: p.Total, Next: p.Next})
		return b.Bytes(), err
	})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Write(b.([]byte))
}

// summaryPage is GET /api/groups?summary=true: each group as the queue
// lists it, without its members.
type summaryPage struct {
	Policy query.PolicyRef `json:"policy"`
	Groups []summaryRow    `json:"groups"`
	Total  int             `json:"total"`
	Next   string          `json:"next"`
}

// summaryRow is one group of a summary page: what its record holds, and
// its review state without the history.
type summaryRow struct {
	ID             string         `json:"id"`
	Key            string         `json:"key"`
	Members        int            `json:"members"`
	Verdict        string         `json:"verdict"`
	ReviewRelation bool           `json:"review_relation"`
	Review         *review.Status `json:"review"`
}

func summaryOf(rows []queueRow) []summaryRow {
	out := make([]summaryRow, 0, len(rows))
	for _, r := range rows {
		st := &review.Status{State: r.Status.State, Latest: r.Status.Latest, Changes: r.Status.Changes}
		out = append(out, summaryRow{ID: r.ID, Key: r.Key, Members: r.Members, Verdict: r.Verdict, ReviewRelation: r.Review, Review: st})
	}
	return out
}

// apiSummary answers GET /api/groups?summary=true: the page of the
// groups the filter selects, each without its members. A bounded server
// makes it from the group records alone (boundedRows), in milliseconds
// whatever the groups' size, where a page of whole groups reads every
// member; a server holding every group, from them. Both give the same
// bytes.
func (s *Server) apiSummary(w http.ResponseWriter, r *http.Request, f service.GroupFilter) {
	q, err := s.queueRows(r.Context(), f)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, summaryPage{Policy: q.pol, Groups: summaryOf(q.rows), Total: q.total, Next: q.next})
}

// groupView is one group with its review state and history, and the
// pairs of its members and its relations that decisions are about.
type groupView struct {
	Policy query.PolicyRef `json:"policy"`
	*query.Group
	Review   *review.Status          `json:"review"`
	Subjects []*review.SubjectStatus `json:"subjects"`
}

func (s *Server) group(r *http.Request) (*service.Reviewed, *query.Group, error) {
	id := r.PathValue("id")
	var rv *service.Reviewed
	var g *query.Group
	if s.o.Bounded {
		b, err := s.boundedNow(r.Context())
		if err != nil {
			return nil, nil, err
		}
		// The group and, around it, the groups its decisions name.
		if rv, g, err = service.ViewShowReviewed(r.Context(), s.st, b.pol.Digest, s.groupOptions(), id); err != nil {
			return nil, nil, err
		}
	} else {
		var err error
		if rv, err = s.reviewed(r.Context()); err != nil {
			return nil, nil, err
		}
		g = rv.Group(id)
	}
	if g == nil {
		return nil, nil, service.InputError{Err: fmt.Errorf("%w %q under policy %s", service.ErrNoGroup, id, rv.Report.Policy.String())}
	}
	return rv, g, nil
}

// GET /api/groups/{id}
func (s *Server) apiGroup(w http.ResponseWriter, r *http.Request) {
	rv, g, err := s.group(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, groupView{rv.Report.Policy, g, rv.Status(g), rv.Subjects(g)})
}

// decisionBody is the body of POST /api/groups/{id}/reviews.
type decisionBody struct {
	Decision  string `json:"decision"`
	Rationale string `json:"rationale"`
	Relation  string `json:"relation"`
	RelatedTo string `json:"related_to"`
	Reviewer  string `json:"reviewer"`
}

// jsonBody checks a write's content type and origin and returns its
// body, bounded by max.
func jsonBody(w http.ResponseWriter, r *http.Request, max int64, types ...string) (io.Reader, error) {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return nil, service.Usagef("cross-site request refused")
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	ok := false
	for _, t := range types {
		ok = ok || mt == t
	}
	if !ok {
		return nil, service.Usagef("Content-Type %q: want %s", r.Header.Get("Content-Type"), strings.Join(types, " or "))
	}
	return http.MaxBytesReader(w, r.Body, max), nil
}

// decode reads one JSON object with known fields only.
func decode(body io.Reader, v any) error {
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return service.Usagef("request body: %v", err)
	}
	if dec.More() {
		return service.Usagef("request body: more than one JSON value")
	}
	return nil
}

// POST /api/groups/{id}/reviews: record a decision; 201 once committed.
func (s *Server) apiDecide(w http.ResponseWriter, r *http.Request) {
	body, err := jsonBody(w, r, s.o.MaxBody, "application/json")
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var b decisionBody
	if err := decode(body, &b); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	d, err := s.decide(r, service.DecideRequest{GroupID: r.PathValue("id"), Decision: b.Decision, Rationale: b.Rationale, Relation: b.Relation, RelatedTo: b.RelatedTo, Reviewer: b.Reviewer})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	w.Header().Set("Location", "/api/groups/"+d.GroupID)
	writeJSON(w, http.StatusCreated, d)
}

// pairBody is the body of POST /api/pairs/reviews.
type pairBody struct {
	Citations []string `json:"citations"` // two citation ids
	Decision  string   `json:"decision"`
	Rationale string   `json:"rationale"`
	Relation  string   `json:"relation"`
	Reviewer  string   `json:"reviewer"`
}

// POST /api/pairs/reviews: record a decision about two citations; 201
// once committed.
func (s *Server) apiDecidePair(w http.ResponseWriter, r *http.Request) {
	body, err := jsonBody(w, r, s.o.MaxBody, "application/json")
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var b pairBody
	if err := decode(body, &b); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	d, err := s.decide(r, service.DecideRequest{Subject: review.SubjectPair, Citations: b.Citations, Decision: b.Decision, Rationale: b.Rationale, Relation: b.Relation, Reviewer: b.Reviewer})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	w.Header().Set("Location", "/api/citations/"+url.PathEscape(d.Citations[0])+"/lineage")
	writeJSON(w, http.StatusCreated, d)
}

// relationBody is the body of POST /api/relations/reviews.
type relationBody struct {
	From      string `json:"from"` // a group id
	To        string `json:"to"`   // another group id
	Decision  string `json:"decision"`
	Rationale string `json:"rationale"`
	Relation  string `json:"relation"`
	Reviewer  string `json:"reviewer"`
}

// POST /api/relations/reviews: record a decision about the relation
// between two groups; 201 once committed.
func (s *Server) apiDecideRelation(w http.ResponseWriter, r *http.Request) {
	body, err := jsonBody(w, r, s.o.MaxBody, "application/json")
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var b relationBody
	if err := decode(body, &b); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	d, err := s.decide(r, service.DecideRequest{Subject: review.SubjectRelation, GroupID: b.From, RelatedTo: b.To, Decision: b.Decision, Rationale: b.Rationale, Relation: b.Relation, Reviewer: b.Reviewer})
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	w.Header().Set("Location", "/api/groups/"+url.PathEscape(d.GroupID))
	writeJSON(w, http.StatusCreated, d)
}

// decide records a decision under the write lock, with the reviewer the
// credentials name (a reviewer given besides must be the same).
func (s *Server) decide(r *http.Request, req service.DecideRequest) (*review.Decision, error) {
	if who := authReviewer(r); who != "" {
		if req.Reviewer != "" && req.Reviewer != who {
			return nil, service.Usagef("reviewer %q: the token names %q", req.Reviewer, who)
		}
		req.Reviewer = who
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	var rv *service.Reviewed
	var b *boundedState
	var err error
	if s.o.Bounded {
		if b, err = s.boundedNow(r.Context()); err != nil {
			return nil, err
		}
		// Only the groups the decision is about, from the view.
		var groups []string
		for _, id := range []string{req.GroupID, req.RelatedTo} {
			if id != "" {
				groups = append(groups, id)
			}
		}
		rv, err = service.ViewReviewedAround(r.Context(), s.st, b.pol.Digest, s.groupOptions(), groups, req.Citations)
	} else {
		rv, err = s.reviewed(r.Context())
	}
	if err != nil {
		return nil, err
	}
	var st review.Writer = s.st
	if s.o.BeforeCommit != nil {
		subject := req.GroupID
		if req.Subject == review.SubjectPair {
			subject = strings.Join(req.Citations, " ")
		}
		st = hookWriter{s.st, func() { s.o.BeforeCommit(subject) }}
	}
	ctx := context.WithoutCancel(r.Context())
	d, err := service.Decide(ctx, st, rv, req, s.o.Now())
	s.gen.Add(1) // even on error: a batch may have been committed
	if err != nil {
		return nil, err
	}
	ix, err := review.Load(ctx, s.st)
	if err != nil {
		return nil, err
	}
	if b != nil {
		// A decision changes no group: the totals and the cached
		// lineages stay.
		nb, err := s.withDecisions(ctx, b, ix)
		if err != nil {
			return nil, err
		}
		s.setBounded(nb)
		return d, nil
	}
	s.setCache(rv.WithDecision(ix, d))
	return d, nil
}

// hookWriter calls before ahead of each Add.
type hookWriter struct {
	*graph.Store
	before func()
}

func (h hookWriter) Add(qs []graph.Quad) (int, error) {
	h.before()
	return h.Store.Add(qs)
}

// GET /api/citations/{id}/lineage?format=json|dot|svg
func (s *Server) apiLineage(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "dot" && format != "svg" {
		s.fail(w, r, 0, service.Usagef("format %q: want json, dot or svg", format))
		return
	}
	l, ds, err := s.lineage(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	switch format {
	case "dot":
		w.Header().Set("Content-Type", "text/vnd.graphviz; charset=utf-8")
		render.LineageDOTDecisions(w, []*query.Lineage{l}, []*query.Lineage{l}, func(string) []*review.Decision { return ds })
	case "svg":
		w.Header().Set("Content-Type", "image/svg+xml")
		render.LineageSVG(w, l, ds)
	default:
		writeJSON(w, http.StatusOK, render.LineageWithDecisions{Lineage: l, Decisions: append([]*review.Decision{}, ds...)})
	}
}

func (s *Server) lineage(r *http.Request) (*query.Lineage, []*review.Decision, error) {
	id := r.PathValue("id")
	l, err := query.LineageOf(r.Context(), citestore.New(s.st), id, &query.LineageOptions{Policy: s.o.Policy, MaxShared: s.o.MaxShared})
	if err != nil {
		if errors.Is(err, query.ErrNoCitation) {
			return nil, nil, service.InputError{Err: err}
		}
		return nil, nil, service.QueryError(err)
	}
	if s.o.Bounded {
		b, err := s.boundedNow(r.Context())
		if err != nil {
			return nil, nil, err
		}
		return l, b.ix.OfCitation(id), nil
	}
	rv, err := s.reviewed(r.Context())
	if err != nil {
		return nil, nil, err
	}
	return l, rv.Index.OfCitation(id), nil
}

// statsView is GET /api/stats: the counts and the review counts.
type statsView struct {
	*query.Stats
	Reviews *review.Counts `json:"reviews"`
}

// statsAt is the stats of the state after write gen, data the ingest
// writes counted when it was computed.
type statsAt struct {
	gen  uint64
	data uint64
	rv   *service.Reviewed
	view *statsView
}

// stats returns the counts of the last committed state, computing them
// once per state: a full grouping of the database is too much work to
// repeat for every reader of the stats page. Concurrent callers wait for
// the one computation rather than each running their own. After a
// decision (no ingest batch since, the same groups served) only the
// review counts are computed again: a decision changes nothing else the
// stats count, and the full computation took about 15 s of CPU at a
// million citations.
func (s *Server) stats(ctx context.Context) (*statsView, error) {
	s.smu.Lock()
	defer s.smu.Unlock()
	gen, data := s.gen.Load(), s.data.Load()
	rv, err := s.reviewed(ctx)
	if err != nil {
		return nil, err
	}
	c := s.last
	if c != nil && c.gen == gen && c.rv == rv {
		return c.view, nil
	}
	var v *statsView
	if c != nil && c.data == data && c.rv.Report == rv.Report {
		v = &statsView{c.view.Stats, rv.Counts()}
	} else if v, err = s.computeStats(ctx, rv); err != nil {
		return nil, err
	}
	s.last = &statsAt{gen, data, rv, v}
	return v, nil
}

// computeStats counts the database and the review state rv, all of it.
func (s *Server) computeStats(ctx context.Context, rv *service.Reviewed) (*statsView, error) {
	s.statsComputed.Add(1)
	snap, err := query.Load(ctx, citestore.New(s.st), s.o.Policy)
	if err != nil {
		return nil, service.QueryError(err)
	}
	rep := query.Groups(snap, query.GroupOptions{MaxShared: s.o.MaxShared})
	return &statsView{query.ComputeStats(snap, rep), rv.Counts()}, nil
}

// GET /api/stats
func (s *Server) apiStats(w http.ResponseWriter, r *http.Request) {
	if s.o.Bounded {
		v, err := s.statsBounded(r.Context())
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		writeJSON(w, http.StatusOK, v)
		return
	}
	v, err := s.stats(r.Context())
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// ingestResult is the answer to POST /api/ingest.
type ingestResult struct {
	Records     int      `json:"records"`
	QuadsAdded  int      `json:"quads_added"`
	URLRejected int      `json:"raw_urls_rejected_by_policy"`
	Invalid     []string `json:"invalid_lines"`
	Run         string   `json:"run"`
}

// POST /api/ingest: a JSON Lines body, ingested as provgraph ingest does
// (validated whole first; ?skip_invalid=true writes the valid lines).
func (s *Server) apiIngest(w http.ResponseWriter, r *http.Request) {
	body, err := jsonBody(w, r, s.o.MaxIngest, "application/x-ndjson", "application/jsonl", "application/json")
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	tmp, err := os.CreateTemp(s.o.TempDir, "provgraph-serve-ingest-*.jsonl")
	if err != nil {
		dir := s.o.TempDir
		if dir == "" {
			dir = os.TempDir()
		}
		s.fail(w, r, 0, fmt.Errorf("ingest: cannot spool the request body in %s, the server's directory for temporary files; nothing was written: %w", dir, err))
		return
	}
	// Unlinked at once, the spool lives only as long as its descriptor,
	// so no exit leaves it behind, kill -9 included (where the system
	// allows removing an open file; elsewhere it goes at the end).
	unlinked := os.Remove(tmp.Name()) == nil
	defer func() {
		tmp.Close()
		if !unlinked {
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, body); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	opts := ingest.Options{Policy: s.o.IngestPolicy, SkipInvalid: r.URL.Query().Get("skip_invalid") == "true", WorkMem: s.o.WorkMem, TempDir: s.o.TempDir}
	opts.Progress = func(p ingest.Progress) {
		if s.o.IngestProgress != nil {
			s.o.IngestProgress(p)
		}
		if p.Phase == "write" {
			s.data.Add(1)
			s.gen.Add(1)
			if s.o.AfterIngestBatch != nil {
				s.o.AfterIngestBatch()
			}
		}
	}
	if s.o.AfterIngestBatch != nil {
		opts.BatchQuads = 50 // small batches, so that a test can stop between them
	}
	// Whatever the ingest committed, the stats computed before it ends
	// are not of its final state.
	defer func() { s.data.Add(1); s.gen.Add(1) }()
	// The ingest runs to its end even when the client goes away: a run
	// stopped half-way is complete only once repeated.
	ctx := context.WithoutCancel(r.Context())
	sum, err := ingest.FromFile(ctx, s.st, tmp, "<request body>", opts)
	if sum.QuadsAdded > 0 {
		// The group records, as an ingest command keeps them, so that
		// provgraph queue answers after the server stops.
		var log bytes.Buffer
		rerr := service.KeepRecords(ctx, s.st, &log, s.o.DB)
		for _, line := range strings.Split(strings.TrimSpace(log.String()), "\n") {
			if line != "" {
				s.notice(line)
			}
		}
		if rerr == nil && s.o.Bounded {
			var b *boundedState
			if b, rerr = s.boundedNow(ctx); rerr == nil {
				_, rerr = s.loadBounded(ctx, b.pol, new(int))
			}
		} else if rerr == nil {
			_, rerr = s.refresh(ctx)
		}
		if rerr != nil && err == nil {
			err = rerr
		}
	}
	res := ingestResult{Records: sum.Records, QuadsAdded: sum.QuadsAdded, URLRejected: sum.URLRejected, Invalid: []string{}, Run: sum.Run.Value}
	for _, e := range sum.Invalid {
		res.Invalid = append(res.Invalid, e.Error())
	}
	switch {
	case errors.Is(err, ingest.ErrInvalidRecords) && opts.SkipInvalid:
		writeJSON(w, http.StatusOK, res)
	case err != nil:
		var re *ingest.RecordError
		var ce *ingest.ConflictError
		if errors.As(err, &re) || errors.As(err, &ce) || errors.Is(err, ingest.ErrInvalidRecords) {
			err = service.InputError{Err: err}
		}
		s.fail(w, r, 0, err)
	default:
		writeJSON(w, http.StatusOK, res)
	}
}

// queryBody is the body of POST /api/query.
type queryBody struct {
	Language string `json:"language"` // "gizmo" (the default)
	Query    string `json:"query"`
	Limit    int    `json:"limit"`
}

// POST /api/query: a Gizmo query, read-only, bounded in time and rows.
func (s *Server) apiQuery(w http.ResponseWriter, r *http.Request) {
	body, err := jsonBody(w, r, s.o.MaxBody, "application/json")
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var b queryBody
	if err := decode(body, &b); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if b.Language != "" && b.Language != "gizmo" {
		s.fail(w, r, 0, service.Usagef("language %q: want gizmo", b.Language))
		return
	}
	if b.Limit <= 0 || b.Limit > s.o.QueryRows {
		b.Limit = s.o.QueryRows
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.o.QueryTimeout)
	defer cancel()
	res, err := s.st.Gizmo(ctx, b.Query, b.Limit)
	if errors.Is(err, context.DeadlineExceeded) {
		err = fmt.Errorf("query stopped after %s (the server's --query-timeout): %w", s.o.QueryTimeout, err)
	}
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
