package citestore

import (
	"fmt"
	"slices"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/store"
)

// SetViewMembers sets whether views begun from now on keep member
// records (newViewMembers), as builds before version 7 did not, and
// returns a function that restores the setting.
func SetViewMembers(on bool) (restore func()) {
	old := newViewMembers
	newViewMembers = on
	return func() { newViewMembers = old }
}

// EditMembers rewrites, in one transaction, the member record of every
// row of the view of policy d with edit: a view whose records say other
// than the quads.
func EditMembers(g *graph.Store, d string, edit func(*store.Citation)) error {
	return g.Update(func(w *graph.Writer) error {
		rows, err := openViewMap(w.View(d), subRows, false)
		if err != nil || rows == nil {
			return fmt.Errorf("no rows: %v", err)
		}
		var ks, vs [][]byte
		if err := rows.Ascend(nil, func(k, v []byte) (bool, error) {
			ks, vs = append(ks, slices.Clone(k)), append(vs, slices.Clone(v))
			return true, nil
		}); err != nil {
			return err
		}
		for i, k := range ks {
			r, err := decodeRow(k, vs[i])
			if err != nil {
				return err
			}
			if r.Member == nil {
				return fmt.Errorf("row %q has no member record", k)
			}
			edit(r.Member)
			if err := rows.Put(k, encodeRow(r)); err != nil {
				return err
			}
		}
		return nil
	})
}
