package service

import (
	"context"
	"errors"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
)

// OneGroup opens the database read-only and returns the review group of a
// comparison key, or the group with an id (query.IsGroupID), under policy
// and opts, with its review status: query.GroupOf, which reads only the
// group's neighbourhood when the database keeps a grouping view of the
// policy, and groups the whole database otherwise, with the same answer.
// A key no citation has, or an id no group has, is an InputError.
// how's Strict and ScanLimit apply as for GroupsFrom when the database
// keeps no usable view.
func (d DB) OneGroup(ctx context.Context, policy, keyOrID string, opts query.GroupOptions, how GroupsRead) (*query.GroupAnswer, *review.Status, error) {
	st, err := d.openOnce()
	if err != nil {
		return nil, nil, err
	}
	defer st.Close()
	if how.Strict {
		cs := citestore.New(st.Quads)
		ok, err := query.ViewUsable(ctx, cs, policy)
		if err == nil && !ok {
			err = d.scanAllowed(ctx, cs, policy, opts, how)
		}
		if err != nil {
			return nil, nil, QueryError(err)
		}
	}
	a, err := query.GroupOf(ctx, groupSource(st.Quads), policy, keyOrID, opts)
	switch {
	case errors.Is(err, query.ErrNoGroup):
		return nil, nil, InputError{err}
	case err != nil:
		return nil, nil, QueryError(err)
	}
	ix, err := review.Load(ctx, st.Quads)
	if err != nil {
		return nil, nil, err
	}
	return a, ix.Status(review.EvidenceOf(a.Group, a.Policy.Digest)), nil
}

// groupSource is what query.GroupOf reads of st: a backend that keeps
// grouping views answers as a query.ViewSource.
func groupSource(st *graph.Store) query.Source { return citestore.New(st) }

// citestore keeps grouping views: GroupOf reads them through this.
var _ query.ViewSource = (*citestore.Store)(nil)
