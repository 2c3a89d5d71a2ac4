package query

import (
	"context"
	"fmt"

	"github.com/provgraph/provgraph/internal/store"
)

// SetGroupsPerTask sets how many groups a task of GroupSet.Write holds,
// until the returned function restores it.
func SetGroupsPerTask(n int) (restore func()) {
	old := groupsPerTask
	groupsPerTask = n
	return func() { groupsPerTask = old }
}

// GroupsFromScan groups snap with the facts made from sc's scan under
// snap's policy (rowFacts); the members are built from snap.
func GroupsFromScan(ctx context.Context, sc store.Scanner, snap *Snapshot, opts GroupOptions) (*Report, error) {
	f, err := rowFacts(ctx, sc, snap.Policy.Digest, 0)
	if err != nil {
		return nil, err
	}
	if f.n != len(snap.Citations) {
		return nil, fmt.Errorf("scan has %d rows, the snapshot %d citations", f.n, len(snap.Citations))
	}
	f.fill = func(rows []int32, dst []Citation) {
		for k, i := range rows {
			dst[k] = *snap.Citations[i]
		}
	}
	return newGrouping(f, snap, opts).run(ctx, nil, nil)
}
