package store

import "errors"

// GroupRecord is what the review queue and the counts by verdict read of
// one group, under one policy and --max-shared (query.GroupRecord is
// this type; query's records.go says how records are made and kept). A
// backend that keeps records (citestore, beside its grouping view)
// stores them as they are.
type GroupRecord struct {
	ID      string
	Key     string   // the smallest key: the group's place in query's order
	Keys    []string // every cited key of the group, sorted
	Members int
	Verdict string
	// ReviewRelation says the group has a relation that needs review
	// (service.Risk orders by it); Queued says it is in the review queue:
	// two members or more, or the source or target of such a relation
	// (the groups `groups` lists by default).
	ReviewRelation bool
	Queued         bool
}

// ErrNoGroup is returned (wrapped) for a key no citation has under the
// policy, or an id no group has (query.ErrNoGroup is this error).
var ErrNoGroup = errors.New("no such group")
