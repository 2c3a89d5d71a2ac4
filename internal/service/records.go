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

// RefreshMaxDirtyPercent and RefreshMinDirty bound what KeepRecords
// refreshes (citestore.DirtyLimit): records are refreshed when the keys
// changed since they were current are at most RefreshMinDirty, or at most
// RefreshMaxDirtyPercent % of the records; past that they are dropped.
const (
	RefreshMaxDirtyPercent = citestore.RefreshMaxDirtyPercent
	RefreshMinDirty        = citestore.RefreshMinDirty
)

// RecordsNote says what KeepRecords did to the records of one policy and
// --max-shared.
type RecordsNote struct {
	citestore.RecordsID
	Dirty     int  // keys changed since the records were current
	Refreshed bool // brought up to date; else dropped
	Why       string
}

// KeepRecordsOf brings every group record the database of g keeps up to
// date after writes (the end of an ingest, resolve, extract or
// renormalize run). Records whose dirty keys are few (RefreshMinDirty,
// RefreshMaxDirtyPercent) are refreshed by query.RefreshRecords with them
// as seeds; others, and incomplete ones (an interrupted build or
// refresh), are dropped. A refresh first removes the marker, writes
// citestore.DefaultRecordsBatch records per transaction, and clears the
// dirty keys and sets the marker in its last: one interrupted (kill -9)
// leaves records without the marker, which queue does not use and the
// next KeepRecordsOf drops. Records with no dirty key are left as they
// are.
func KeepRecordsOf(ctx context.Context, g *graph.Store) ([]RecordsNote, error) {
	cs := citestore.New(g)
	kept, err := cs.RecordsKept(ctx)
	if err != nil {
		return nil, err
	}
	var notes []RecordsNote
	for _, id := range kept {
		n := RecordsNote{RecordsID: id}
		rs := cs.Records(id.Policy, id.MaxShared)
		_, complete, _, err := rs.State(ctx)
		if err != nil {
			return notes, err
		}
		has, err := cs.HasView(ctx, id.Policy)
		if err != nil {
			return notes, err
		}
		if !complete || !has {
			if err := rs.Drop(ctx); err != nil {
				return notes, err
			}
			n.Why = "incomplete (an interrupted build or refresh)"
			notes = append(notes, n)
			continue
		}
		counts, err := rs.Counts(ctx)
		if err != nil {
			return notes, err
		}
		limit := citestore.DirtyLimit(int(counts["groups"]))
		keys, err := rs.DirtyKeys(ctx, limit)
		if err != nil {
			return notes, err
		}
		if len(keys) == 0 {
			continue
		}
		n.Dirty = len(keys)
		if len(keys) > limit {
			if err := rs.Drop(ctx); err != nil {
				return notes, err
			}
			n.Why = fmt.Sprintf("more than %d keys changed (the limit: %d, or %d %% of the %d records)", limit, RefreshMinDirty, RefreshMaxDirtyPercent, counts["groups"])
			notes = append(notes, n)
			continue
		}
		begun := time.Now()
		if err := rs.Unmark(ctx); err != nil {
			return notes, err
		}
		if err := query.RefreshRecords(ctx, cs, id.Policy, id.MaxShared, keys, rs); err != nil {
			// Derived data: a refresh that cannot run (the view made by
			// another normalization engine, a damaged record) drops the
			// records rather than fail the run that wrote the citations.
			if ctx.Err() != nil {
				return notes, err
			}
			if derr := rs.Drop(ctx); derr != nil {
				return notes, errors.Join(err, derr)
			}
			n.Why = "the refresh failed: " + err.Error()
			notes = append(notes, n)
			continue
		}
		if _, err := rs.Finish(ctx, "refresh", begun); err != nil {
			return notes, err
		}
		n.Refreshed = true
		notes = append(notes, n)
	}
	return notes, nil
}

// BuildRecordsOf drops the records of the policy with digest d under
// maxShared and writes them again with query.BuildRecords (a whole
// grouping: the memory of provgraph groups), the marker last: an
// interrupted build leaves records without it, which are not used. It
// returns the number of records.
func BuildRecordsOf(ctx context.Context, g *graph.Store, d string, maxShared int) (int, error) {
	cs := citestore.New(g)
	rs := cs.Records(d, maxShared)
	begun := time.Now()
	if err := rs.Begin(ctx); err != nil {
		return 0, err
	}
	if err := query.BuildRecords(ctx, cs, d, maxShared, rs); err != nil {
		return 0, err
	}
	return rs.Finish(ctx, "build", begun)
}

var _ query.RecordStore = (*citestore.Records)(nil)

// KeepRecords is KeepRecordsOf, saying on w what it did: a line per
// records refreshed, and for records dropped how to build them again. It
// does nothing, and says nothing, when the database keeps no records.
func KeepRecords(ctx context.Context, g *graph.Store, w io.Writer, db string) error {
	start := time.Now()
	cs := citestore.New(g)
	notes, err := KeepRecordsOf(ctx, g)
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
		return nil, InputError{fmt.Errorf("policy %s, --max-shared %d: the group records are behind %s that a run stopped before its end changed, and are not used (run that command again, whose end refreshes them, or build them: provgraph queue --build --db %s --policy %s --max-shared %d)",
			pol, maxSharedOf(req.MaxShared), render.Plural(dirty, "key"), d.Path, pol.Digest, maxSharedOf(req.MaxShared))}
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
	n, err := BuildRecordsOf(ctx, st, pol.Digest, maxShared)
	return pol, n, QueryError(err)
}

// RecordsCheck is what check found of one set of group records.
type RecordsCheck = citestore.RecordsCheck

// CheckProgress is where a check is (graph.Progress): CheckAll reports
// the start of each part, and how far it is every few tens of thousands
// of terms, tuples, citations or rows, to progress when it is not nil.
type CheckProgress = graph.Progress

// CheckAll verifies the database as check does (citestore's CheckAll:
// the file, the grouping views, the group records' structure) and
// compares each set of group records with a fresh build (query.BuildRecords
// through a query.RecordFunc, each record compared as it is made). Past
// the citations a whole grouping may hold, the build reads the grouping
// view a batch at a time with checkRecordsMapped of the file mapped
// (query.BuildRecordsFromView), or the records are not compared. It
// returns what it found of each set of records, for check to say.
// progress, when not nil, is called with where the check is, one call at
// a time.
func (s *Store) CheckAll(ctx context.Context, progress func(CheckProgress)) ([]RecordsCheck, error) {
	ctx = graph.WithProgress(ctx, progress)
	cs := citestore.New(s.Quads)
	return cs.CheckAll(ctx, func(ctx context.Context, d string, maxShared int, bounded bool, put func(*store.GroupRecord) error) error {
		rs := query.RecordFunc(put)
		if !bounded {
			return query.BuildRecords(ctx, cs, d, maxShared, rs)
		}
		built, err := query.BuildRecordsFromView(ctx, cs, d, maxShared, rs, query.ViewRead{Mapped: checkRecordsMapped})
		if err == nil && !built {
			err = citestore.ErrFreshUnbounded
		}
		return err
	})
}

// checkRecordsMapped is how much of the file the fresh build of check's
// comparison of group records keeps mapped: half of what groups keeps
// (query.DefaultViewMapped), so that check stays within 1 GiB at ten
// million citations.
const checkRecordsMapped = 256 << 20
