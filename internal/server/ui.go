package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
)

// csrfCookie holds the double-submit token every form repeats.
const csrfCookie = "pg_csrf"

// reviewerCookie remembers the reviewer name typed in a form, when the
// server has no tokens.
const reviewerCookie = "pg_reviewer"

// page is what every template gets besides its data.
type page struct {
	Title    string
	CSRF     string
	Reviewer string // the signed-in reviewer, or the remembered name
	Tokens   bool   // the server authenticates: the reviewer is fixed
	ReadOnly bool
}

var funcs = template.FuncMap{
	"short": func(s string, n int) string {
		if r := []rune(s); len(r) > n {
			return string(r[:n-1]) + "…"
		}
		return s
	},
	"join":      strings.Join,
	"decisions": func() []string { return review.Decisions },
	"kinds":     func() []string { return review.RelationKinds },
	"states":    func() []string { return review.States },
	"verdicts": func() []string {
		var vs []string
		for _, v := range model.Verdicts {
			vs = append(vs, v.Name)
		}
		return vs
	},
	"deref": func(s *string) string {
		if s == nil {
			return ""
		}
		return *s
	},
	"add": func(a, b int) int { return a + b },
	// esc shows a stored value that holds a control or bidirectional
	// formatting character as a quoted Go string, as the CLI does, so
	// that it cannot reorder the page's text; html/template escapes HTML.
	"esc": render.EscapeText,
}

// pageOf returns the page data of a request, setting the CSRF cookie
// when it is missing.
func (s *Server) pageOf(w http.ResponseWriter, r *http.Request, title string) page {
	p := page{Title: title, Tokens: len(s.o.Tokens) > 0, ReadOnly: s.o.ReadOnly, Reviewer: authReviewer(r)}
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 32 {
		p.CSRF = c.Value
	} else {
		p.CSRF = randomToken()
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: p.CSRF, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	if p.Reviewer == "" {
		if c, err := r.Cookie(reviewerCookie); err == nil {
			if v, err := url.QueryUnescape(c.Value); err == nil {
				p.Reviewer = v
			}
		}
	}
	return p
}

// checkCSRF compares the form's token with the cookie's.
func checkCSRF(r *http.Request) error {
	c, err := r.Cookie(csrfCookie)
	if err != nil || c.Value == "" || subtle.ConstantTimeCompare([]byte(c.Value), []byte(r.PostFormValue("csrf"))) != 1 {
		return service.Usagef("the form's CSRF token is missing or wrong: reload the page and submit again")
	}
	return nil
}

// show renders a template into a buffer first, so that an error gives an
// error page rather than half a page.
func (s *Server) show(w http.ResponseWriter, r *http.Request, name string, data map[string]any) {
	var b bytes.Buffer
	if err := s.tpl.ExecuteTemplate(&b, name, data); err != nil {
		s.fail(w, r, http.StatusInternalServerError, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

// queueRow is one group of the queue.
type queueRow struct {
	ID, Verdict, Key string
	Members          int
	// Relations is the group's relations, -1 when the row was made from
	// the group's record (a bounded server), which does not count them.
	Relations int
	Review    bool // it has a relation to review
	Status    *review.Status
}

// rowOf is the queue row of a group read whole.
func rowOf(g *query.Group, st *review.Status) queueRow {
	row := queueRow{ID: g.ID, Verdict: g.Verdict, Key: g.Key, Members: len(g.Members), Relations: len(g.Relations), Status: st}
	for _, rel := range g.Relations {
		row.Review = row.Review || rel.Review
	}
	return row
}

// GET /: the review queue, in risk order unless asked otherwise.
func (s *Server) uiQueue(w http.ResponseWriter, r *http.Request) {
	f, err := filterOf(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if f.Sort == "" && !s.o.Bounded {
		f.Sort = "risk"
	}
	q, err := s.queueRows(r.Context(), f)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	next := ""
	if q.next != "" {
		v := r.URL.Query()
		v.Set("cursor", q.next)
		next = "/?" + v.Encode()
	}
	s.show(w, r, "queue.html", map[string]any{"Page": s.pageOf(w, r, "Review queue"), "Rows": q.rows, "Total": q.total, "Next": next, "F": f, "Policy": q.pol, "Bounded": s.o.Bounded})
}

// queueRows is the page of rows the filter selects, for the UI's queue
// and GET /api/groups?summary=true: on a bounded server, from the group
// records alone (boundedRows), or the one group an id or key names; on a
// server holding every group, from them.
func (s *Server) queueRows(ctx context.Context, f service.GroupFilter) (*queueRows, error) {
	if s.o.Bounded && f.ID == "" && f.Key == "" {
		return s.boundedRows(ctx, f)
	}
	var rv *service.Reviewed
	var p *service.Page
	var err error
	if s.o.Bounded {
		rv, p, err = s.boundedPage(ctx, f) // one group: by id or key
	} else if rv, err = s.reviewed(ctx); err == nil {
		p, err = rv.Filter(f)
	}
	if err != nil {
		return nil, err
	}
	q := &queueRows{pol: rv.Report.Policy, rows: make([]queueRow, 0, len(p.Groups)), total: p.Total, next: p.Next}
	for _, g := range p.Groups {
		q.rows = append(q.rows, rowOf(g, rv.Status(g)))
	}
	return q, nil
}

// GET /groups/{id}: a group, its members side by side, its relations and
// decisions, and the form to decide.
func (s *Server) uiGroup(w http.ResponseWriter, r *http.Request) {
	rv, g, err := s.group(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	ls, err := s.memberLineages(r.Context(), rv, g)
	if err != nil {
		s.fail(w, r, 0, service.QueryError(err))
		return
	}
	s.show(w, r, "group.html", map[string]any{
		"Page": s.pageOf(w, r, "Group "+g.ID), "G": g, "Status": rv.Status(g), "Subjects": rv.Subjects(g), "Lineages": ls,
		"Policy": rv.Report.Policy, "Decided": r.URL.Query().Get("decided"),
	})
}

// maxShown is how many members a group page shows in full.
const maxShown = 20

// memberLineages returns the lineages of the first maxShown members of g,
// which give a group page its step logs, hops and captures. They are read
// together: one exploration of the group's neighbourhood serves them all.
// They are read once per served groups (pageCache), at the first view of
// the group or before the groups are served (warmLineages): the page then
// shows one state, the one its group was computed from or just after. A
// decision keeps them: it changes no lineage.
func (s *Server) memberLineages(ctx context.Context, rv *service.Reviewed, g *query.Group) ([]*query.Lineage, error) {
	ids := make([]string, 0, maxShown)
	for _, m := range g.Members[:min(len(g.Members), maxShown)] {
		ids = append(ids, m.CitationID)
	}
	state, current := any(rv.Report), s.currentGroups(rv.Report)
	if s.o.Bounded {
		b, err := s.boundedNow(ctx)
		if err != nil {
			return nil, err
		}
		state, current = b.groups, s.currentBounded(b.groups)
	}
	v, err := s.lineages.get(state, current, g.ID, func() (any, error) {
		// Not the request's context: other readers may wait for it.
		return query.LineagesOf(context.WithoutCancel(ctx), citestore.New(s.st), ids, &query.LineageOptions{Policy: s.o.Policy, MaxShared: s.o.MaxShared})
	})
	if err != nil {
		return nil, err
	}
	return v.([]*query.Lineage), nil
}

// warmLineages reads the member lineages of the first page of the queue
// in risk order (the groups reviewers open first) for the groups rv
// serves now, so that their pages need no read of the store.
func (s *Server) warmLineages(ctx context.Context, rv *service.Reviewed) error {
	p, err := rv.Filter(service.GroupFilter{Queue: true, Sort: "risk", Limit: DefaultPageSize})
	if err != nil {
		return err
	}
	for _, g := range p.Groups {
		if _, err := s.memberLineages(ctx, rv, g); err != nil {
			return err
		}
	}
	return nil
}

// POST /groups/{id}/decide: the form's decision, then back to the group.
func (s *Server) uiDecide(w http.ResponseWriter, r *http.Request) {
	s.decideForm(w, r, func() service.DecideRequest {
		return service.DecideRequest{GroupID: r.PathValue("id"), RelatedTo: r.PostFormValue("related_to")}
	})
}

// POST /groups/{id}/decide-pair: the decision about the two citations the
// form names (members ticked on the page, or a citation id typed), then
// back to the group {id}, whose own decisions it does not change.
func (s *Server) uiDecidePair(w http.ResponseWriter, r *http.Request) {
	s.decideForm(w, r, func() service.DecideRequest {
		var ids []string
		for _, id := range r.PostForm["citations"] {
			if id = strings.TrimSpace(id); id != "" {
				ids = append(ids, id)
			}
		}
		return service.DecideRequest{Subject: review.SubjectPair, Citations: ids}
	})
}

// POST /groups/{id}/decide-relation: the decision about the relation from
// the group {id} to the form's group to, then back to the group {id}.
func (s *Server) uiDecideRelation(w http.ResponseWriter, r *http.Request) {
	s.decideForm(w, r, func() service.DecideRequest {
		return service.DecideRequest{Subject: review.SubjectRelation, GroupID: r.PathValue("id"), RelatedTo: r.PostFormValue("to")}
	})
}

// decideForm records the decision of a form of the group page: subject
// names what it is about, the form gives the decision, relation,
// rationale and reviewer. It checks the CSRF token, remembers the
// reviewer (without tokens) and sends the reviewer back to the group
// page.
func (s *Server) decideForm(w http.ResponseWriter, r *http.Request, subject func() service.DecideRequest) {
	r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBody)
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if err := checkCSRF(r); err != nil {
		s.fail(w, r, http.StatusForbidden, err)
		return
	}
	req := subject()
	req.Decision, req.Rationale, req.Reviewer = r.PostFormValue("decision"), r.PostFormValue("rationale"), r.PostFormValue("reviewer")
	if req.Decision == review.Related {
		req.Relation = r.PostFormValue("relation")
	}
	d, err := s.decide(r, req)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	if len(s.o.Tokens) == 0 {
		http.SetCookie(w, &http.Cookie{Name: reviewerCookie, Value: url.QueryEscape(req.Reviewer), Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	}
	http.Redirect(w, r, "/groups/"+url.PathEscape(r.PathValue("id"))+"?decided="+url.QueryEscape(d.ID), http.StatusSeeOther)
}

// GET /citations/{id}/lineage: the lineage drawn, with its text.
func (s *Server) uiLineage(w http.ResponseWriter, r *http.Request) {
	l, ds, err := s.lineage(r)
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var svg, text bytes.Buffer
	render.LineageSVG(&svg, l, ds)
	render.LineageText(&text, []*query.Lineage{l})
	render.LineageDecisions(&text, []*query.Lineage{l}, func(string) []*review.Decision { return ds })
	s.show(w, r, "lineage.html", map[string]any{"Page": s.pageOf(w, r, "Lineage of "+l.CitationID), "L": l,
		// The SVG is render's, every text in it XML-escaped.
		"SVG": template.HTML(svg.String()), "Text": text.String()})
}

// GET /stats
func (s *Server) uiStats(w http.ResponseWriter, r *http.Request) {
	if s.o.Bounded {
		v, err := s.statsBounded(r.Context())
		if err != nil {
			s.fail(w, r, 0, err)
			return
		}
		var b bytes.Buffer
		render.RecordCounts(&b, v.Policy, v.Groups, v.Queued, v.ByVerdict)
		render.ReviewCounts(&b, v.Reviews)
		s.show(w, r, "stats.html", map[string]any{"Page": s.pageOf(w, r, "Statistics"), "Text": b.String()})
		return
	}
	v, err := s.stats(r.Context())
	if err != nil {
		s.fail(w, r, 0, err)
		return
	}
	var b bytes.Buffer
	render.StatsTable(&b, v.Stats)
	render.ReviewCounts(&b, v.Reviews)
	s.show(w, r, "stats.html", map[string]any{"Page": s.pageOf(w, r, "Statistics"), "Text": b.String()})
}

// GET /login: the sign-in form of a server with tokens.
func (s *Server) uiLogin(w http.ResponseWriter, r *http.Request) {
	s.show(w, r, "login.html", map[string]any{"Page": s.pageOf(w, r, "Sign in")})
}

// POST /login: a valid token becomes the session cookie.
func (s *Server) uiLoginPost(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, s.o.MaxBody)
	if err := checkCSRF(r); err != nil {
		s.fail(w, r, http.StatusForbidden, err)
		return
	}
	tok := r.PostFormValue("token")
	if _, ok := s.reviewerOf(tok); !ok {
		s.fail(w, r, http.StatusUnauthorized, errors.New("wrong token"))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: tok, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
