package graph

import (
	"context"
	"errors"
	"fmt"

	cgraph "github.com/cayleygraph/cayley/graph"
	cquery "github.com/cayleygraph/cayley/query"
	"github.com/cayleygraph/cayley/query/gizmo"
	"github.com/cayleygraph/quad"
)

// GizmoResult is the answer to a Gizmo query: each result as cayley's
// JSON collation gives it (an object of tags for g.V()...All(), or the
// value given to g.Emit), and whether more were found than the limit.
type GizmoResult struct {
	Results   []any `json:"results"`
	Truncated bool  `json:"truncated"`
}

// ErrQuery marks an error in a Gizmo query's text or run (a syntax
// error, an unknown step, a thrown exception): the caller's to fix.
var ErrQuery = errors.New("query error")

// Gizmo runs a query in cayley's Gizmo language
// (https://cayley.gitbook.io/cayley/query-languages/gizmoapi) on the
// store, read-only: the query store refuses every write. It returns at
// most limit results (Truncated says there were more) and stops when ctx
// is done, with ctx's error.
func (s *Store) Gizmo(ctx context.Context, code string, limit int) (*GizmoResult, error) {
	if limit < 1 {
		limit = 1
	}
	sess := gizmo.NewSession(readOnlyQS{s.Cayley()})
	it, err := sess.Execute(ctx, code, cquery.Options{Limit: limit + 1, Collation: cquery.JSON})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrQuery, err)
	}
	defer it.Close()
	res := &GizmoResult{Results: []any{}}
	for it.Next(ctx) {
		v := it.Result()
		if v == nil {
			continue
		}
		if len(res.Results) == limit {
			res.Truncated = true
			break
		}
		res.Results = append(res.Results, v)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := it.Err(); err != nil {
		var ge *Error
		if errors.As(err, &ge) || errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrQuery, err)
	}
	return res, nil
}

// readOnlyQS is the store for queries: every write fails.
type readOnlyQS struct{ *CayleyStore }

func (readOnlyQS) ApplyDeltas([]cgraph.Delta, cgraph.IgnoreOpts) error { return ErrReadOnly }

func (readOnlyQS) NewQuadWriter() (quad.WriteCloser, error) { return nil, ErrReadOnly }
