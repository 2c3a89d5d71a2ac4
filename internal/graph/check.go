package graph

import (
	"context"
	"errors"
	"fmt"
	"strings"

	ckv "github.com/cayleygraph/cayley/graph/kv"
	cproto "github.com/cayleygraph/cayley/graph/proto"
	"github.com/cayleygraph/quad"
	"go.etcd.io/bbolt"
)

// maxProblems is how many problems Check lists before it stops looking.
const maxProblems = 20

// Check verifies that the store is consistent, as bbolt's Tx.Check does
// for pages: the format marker is intact; every stored quad can be read
// back and converted to a valid Quad in stored form; the quad counter
// equals the number of quads read; and a lookup by each quad's subject,
// predicate and object, through the same indexes Match uses, finds each
// quad exactly once and nothing else. It reads the whole store (every quad
// once, then one index lookup per distinct subject, predicate and object)
// and returns an *Error wrapping ErrCorrupt that lists what it found.
func (s *Store) Check(ctx context.Context) error {
	qs, err := s.reader("check")
	if err != nil {
		return err
	}
	c := checker{ctx: ctx, qs: qs}
	err = c.run(s.db)
	if errors.Is(err, errTooMany) {
		err = nil
	}
	if err == nil && len(c.problems) > 0 {
		err = fmt.Errorf("%w:\n\t%s", ErrCorrupt, strings.Join(c.problems, "\n\t"))
	}
	if err != nil {
		return &Error{Op: "check", Path: s.path, Err: err}
	}
	return nil
}

type checker struct {
	ctx      context.Context
	qs       *ckv.QuadStore
	problems []string
	// uses counts, per direction (subject, predicate, object), the quads
	// using each node there.
	uses [3]map[uint64]int
}

// errTooMany ends the check once maxProblems are listed.
var errTooMany = errors.New("too many problems")

func (c *checker) problem(format string, args ...any) error {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
	if len(c.problems) >= maxProblems {
		c.problems = append(c.problems, "(stopped looking)")
		return errTooMany
	}
	return nil
}

func (c *checker) run(db *bbolt.DB) error {
	err := db.View(func(tx *bbolt.Tx) error {
		needInit, err := inspect(tx)
		if err == nil && needInit {
			err = errors.New("format marker missing")
		}
		return err
	})
	if err != nil {
		return c.problem("%v", err)
	}
	n, err := c.readAll()
	if err != nil {
		return err
	}
	counted, err := size(c.ctx, c.qs)
	if err != nil {
		return err
	}
	if counted != n {
		if err := c.problem("quad counter says %d, reading every quad found %d", counted, n); err != nil {
			return err
		}
	}
	for i, d := range []quad.Direction{quad.Subject, quad.Predicate, quad.Object} {
		for id, want := range c.uses[i] {
			if err := c.lookup(d, id, want); err != nil {
				return err
			}
		}
	}
	return nil
}

// readAll reads and converts every quad, counting node uses.
func (c *checker) readAll() (int64, error) {
	for i := range c.uses {
		c.uses[i] = make(map[uint64]int)
	}
	var n int64
	names := newNamer(c.qs)
	batch := make([]*cproto.Primitive, 0, scanBatch)
	flush := func() error {
		defer func() { batch = batch[:0] }()
		if err := c.ctx.Err(); err != nil {
			return err
		}
		quads, err := names.quads(c.ctx, batch)
		if err != nil {
			return c.problem("quads %d to %d: %v", batch[0].ID, batch[len(batch)-1].ID, err)
		}
		for i, q := range quads {
			if norm, why := normQuad(q); why != "" {
				err = c.problem("quad %d (%s): %s", batch[i].ID, q, why)
			} else if norm != q {
				err = c.problem("quad %d (%s) is not in stored form", batch[i].ID, q)
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	it := c.qs.QuadsAllIterator().Iterate()
	defer it.Close()
	for it.Next(c.ctx) {
		p, ok := it.Result().(*cproto.Primitive)
		if !ok {
			return n, fmt.Errorf("cayley iterator returned %T, want a quad primitive", it.Result())
		}
		n++
		for i, d := range []quad.Direction{quad.Subject, quad.Predicate, quad.Object} {
			c.uses[i][p.GetDirection(d)]++
		}
		batch = append(batch, p)
		if len(batch) == scanBatch {
			if err := flush(); err != nil {
				return n, err
			}
		}
	}
	if err := it.Err(); err != nil {
		return n, err
	}
	if len(batch) > 0 {
		return n, flush()
	}
	return n, nil
}

// lookup checks that the index Match uses for direction d alone finds the
// want quads that have node id there, each once, and no other.
func (c *checker) lookup(d quad.Direction, id uint64, want int) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	var ids [4]uint64
	ids[d-quad.Subject] = id
	it := plan(c.qs, ids).Iterate()
	defer it.Close()
	seen := make(map[uint64]bool, want)
	for it.Next(c.ctx) {
		p, ok := it.Result().(*cproto.Primitive)
		if !ok {
			return fmt.Errorf("cayley iterator returned %T, want a quad primitive", it.Result())
		}
		bad := ""
		switch {
		case p.IsNode():
			bad = fmt.Sprintf("returns node %d", p.ID)
		case p.GetDirection(d) != id:
			bad = fmt.Sprintf("returns quad %d, whose %s is %d", p.ID, d, p.GetDirection(d))
		case seen[p.ID]:
			bad = fmt.Sprintf("returns quad %d twice", p.ID)
		}
		if bad != "" {
			if err := c.problem("lookup by %s %d %s", d, id, bad); err != nil {
				return err
			}
			continue
		}
		seen[p.ID] = true
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(seen) != want {
		return c.problem("lookup by %s %d finds %d quads, want %d", d, id, len(seen), want)
	}
	return nil
}
