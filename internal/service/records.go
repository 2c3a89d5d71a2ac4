package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/store"
)

// KeepRecords brings the group records the database keeps up to date at
// the end of a run that wrote citations (citestore.KeepRecords), and says
// on w what it did: a line per records refreshed, and for records dropped
// how to build them again. It does nothing, and says nothing, when the
// database keeps no records.
func KeepRecords(ctx context.Context, g *graph.Store, w io.Writer, db string) error {
	start := time.Now()
	cs := citestore.New(g)
	notes, err := cs.KeepRecords(ctx)
	names := map[string]string{}
	if len(notes) > 0 {
		if pols, perr := cs.StoredPolicies(ctx); perr == nil {
			for _, p := range pols {
				names[p.Digest] = p.String()
			}
		}
	}
	for _, n := range notes {
		name := n.Policy
		if s, ok := names[n.Policy]; ok {
			name = s
		}
		if n.Refreshed {
			fmt.Fprintf(w, "group records of policy %s, --max-shared %d: refreshed for %s, %s\n",
				render.EscapeText(name), n.MaxShared, render.Plural(n.Dirty, "changed key"), time.Since(start).Round(time.Millisecond))
			continue
		}
		fmt.Fprintf(w, "group records of policy %s, --max-shared %d dropped: %s; provgraph queue answers again once you run: provgraph queue --build --db %s --policy %s --max-shared %d\n",
			render.EscapeText(name), n.MaxShared, n.Why, render.EscapeText(db), render.EscapeText(n.Policy), n.MaxShared)
	}
	if err != nil {
		return fmt.Errorf("keeping the group records current: %w (the records are not used until rebuilt: provgraph queue --build --db %s)", err, db)
	}
	return nil
}

// QueueRequest asks for a page of the review queue, or the counts by
// verdict, from the group records of a policy and --max-shared.
type QueueRequest struct {
	Policy    string
	MaxShared int
	After     string
	Limit     int
	Counts    bool
}

// QueueResult is a page of the queue (Records) or the counts by verdict.
type QueueResult struct {
	Policy  store.PolicyRef
	Records []*query.GroupRecord
	Counts  map[string]int
	Built   string // the records' marker: how and when they were made
}

// ErrNoRecords says the database keeps no complete group records for the
// policy and --max-shared asked.
var ErrNoRecords = citestore.ErrNoRecords

// Queue answers from the group records, never loading the database. No
// records is an error wrapping ErrNoRecords that says how to build them;
// an --after id that is not queued is Usage.
func (d DB) Queue(ctx context.Context, req QueueRequest) (*QueueResult, error) {
	st, err := d.Open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	cs := citestore.New(st)
	pol, err := ViewPolicy(ctx, cs, req.Policy)
	if err != nil {
		return nil, err
	}
	rs := cs.Records(pol.Digest, req.MaxShared)
	_, complete, marker, err := rs.State(ctx)
	if err != nil {
		return nil, err
	}
	if !complete {
		return nil, InputError{fmt.Errorf("policy %s, --max-shared %d: %w (build them, a full grouping, with: provgraph queue --build --db %s --policy %s --max-shared %d)",
			pol, maxSharedOf(req.MaxShared), ErrNoRecords, d.Path, pol.Digest, maxSharedOf(req.MaxShared))}
	}
	dirty, err := rs.Dirty(ctx)
	if err != nil {
		return nil, err
	}
	if dirty > 0 {
		return nil, InputError{fmt.Errorf("policy %s, --max-shared %d: %w: they are behind %s that a run interrupted before its end changed (run that command again to finish it, which refreshes them, or build them: provgraph queue --build --db %s --policy %s --max-shared %d)",
			pol, maxSharedOf(req.MaxShared), ErrNoRecords, render.Plural(dirty, "key"), d.Path, pol.Digest, maxSharedOf(req.MaxShared))}
	}
	res := &QueueResult{Policy: pol, Built: marker}
	if req.Counts {
		res.Counts, err = rs.Counts(ctx)
		return res, err
	}
	res.Records, err = rs.Queue(ctx, req.After, req.Limit)
	if errors.Is(err, query.ErrNoGroup) {
		return nil, UsageError{fmt.Errorf("--after: %w", err)}
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

func maxSharedOf(n int) int {
	if n <= 0 {
		return model.DefaultMaxShared
	}
	return n
}

// BuildRecords writes the group records of a policy and --max-shared
// with a full grouping (the memory provgraph groups needs), replacing
// any; it returns the policy and the number of records.
func (d DB) BuildRecords(ctx context.Context, policy string, maxShared int) (store.PolicyRef, int, error) {
	st, err := d.Open(false)
	if err != nil {
		return store.PolicyRef{}, 0, err
	}
	defer st.Close()
	cs := citestore.New(st)
	pol, err := ViewPolicy(ctx, cs, policy)
	if err != nil {
		return pol, 0, err
	}
	n, err := cs.Records(pol.Digest, maxShared).Build(ctx)
	return pol, n, QueryError(err)
}
