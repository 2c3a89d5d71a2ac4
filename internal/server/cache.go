package server

import "sync"

// maxCached bounds the entries of a pageCache, and maxCachedBytes the
// bytes of its encoded pages: past either the cache starts again empty,
// so that a crawl of every group cannot grow it without end. A page of
// GET /api/groups of 100 groups at ten million citations is 4 MB.
const (
	maxCached      = 1024
	maxCachedBytes = 64 << 20
)

// pageCache keeps what readers compute from one served state: the
// encoded pages of GET /api/groups, per *service.Reviewed (which a write
// swaps in), and the members' lineages of group pages, per *query.Report
// (the groups, which a decision keeps: a decision changes no lineage).
// Under load every
// reviewer asks for the same first queue pages and the same risky groups;
// encoding a page or exploring a group's neighbourhood once per state,
// not once per request, was most of the readers' time in a profile at a
// million citations. Readers of one key wait for its one computation.
// Nothing cached outlives its state: the next state empties the cache.
type pageCache struct {
	mu    sync.Mutex
	state any // a pointer
	m     map[string]*cached
	bytes int // of the []byte values in m
}

// cached is one computation, done when done is closed.
type cached struct {
	done chan struct{}
	v    any
	err  error
}

// get returns the value of key in state, computing it with compute the
// first time. current reports whether state is the one the server serves
// now: a reader that still holds an earlier state computes its own value
// and caches nothing, so that an old state never replaces a newer one.
// Errors are not kept.
func (c *pageCache) get(state any, current func() bool, key string, compute func() (any, error)) (any, error) {
	c.mu.Lock()
	if c.state != state {
		if !current() {
			c.mu.Unlock()
			return compute()
		}
		c.state, c.m, c.bytes = state, map[string]*cached{}, 0
	}
	if e := c.m[key]; e != nil {
		c.mu.Unlock()
		<-e.done
		return e.v, e.err
	}
	if len(c.m) >= maxCached || c.bytes >= maxCachedBytes {
		c.m, c.bytes = map[string]*cached{}, 0
	}
	e := &cached{done: make(chan struct{})}
	c.m[key] = e
	c.mu.Unlock()
	e.v, e.err = compute()
	close(e.done)
	c.mu.Lock()
	if c.m[key] == e {
		if e.err != nil {
			delete(c.m, key)
		} else if b, ok := e.v.([]byte); ok {
			c.bytes += len(b)
		}
	}
	c.mu.Unlock()
	return e.v, e.err
}
