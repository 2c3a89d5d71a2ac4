package service

import (
	"context"
	"errors"

	"github.com/provgraph/provgraph/internal/graph"
)

// Gizmo runs a read-only cayley Gizmo query on the store, returning at
// most rows results. A query that does not parse or fails in its own terms
// is a UsageError; the caller's deadline (ctx) bounds its time.
func (s *Store) Gizmo(ctx context.Context, query string, rows int) (*graph.GizmoResult, error) {
	res, err := s.Quads.Gizmo(ctx, query, rows)
	if errors.Is(err, graph.ErrQuery) {
		return nil, UsageError{Err: err}
	}
	return res, err
}
