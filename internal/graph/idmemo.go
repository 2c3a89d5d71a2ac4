package graph

import "sync"

// idMemo keeps the ids that Reader.ID found, for the read transactions
// that follow. A term's id never changes once stored (FORMAT.md: ids are
// given in order of first appearance and never reused), so an id found
// on one snapshot holds on every later one, and on an earlier one that
// already had it (an id below that snapshot's next id). A query that
// reads on a transaction of its own (a lineage) looked up the same few
// dozen predicates and classes in the dictionary every time: a seek in
// the hash index and a read of the term each, a quarter of a lineage's
// CPU at ten million citations.
//
// Only ids found are kept (a term not stored may be stored by the next
// write), and at most idMemoSize of them: past it the memo is emptied, so
// that the terms asked most (the vocabulary) come back at once and a
// stream of terms asked once (citation ids) costs nothing to keep.
type idMemo struct {
	mu sync.RWMutex
	m  map[string]ID
}

const idMemoSize = 8192

// get returns the id kept for the term encoded as code, 0 for none.
func (c *idMemo) get(code []byte) ID {
	c.mu.RLock()
	id := c.m[string(code)]
	c.mu.RUnlock()
	return id
}

// put keeps id (not 0) for the term encoded as code.
func (c *idMemo) put(code []byte, id ID) {
	c.mu.Lock()
	if c.m == nil || len(c.m) >= idMemoSize {
		c.m = make(map[string]ID, 256)
	}
	c.m[string(code)] = id
	c.mu.Unlock()
}
