package query

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/provgraph/provgraph/internal/cores"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Snapshot is everything the queries read, loaded in one pass over the
// store. Loading reads; it never writes.
type Snapshot struct {
	Policies  []PolicyRef // every policy in the database, oldest first
	Policy    PolicyRef   // the policy the snapshot's normalizations are under
	Citations []*Citation // sorted by citation id
	Runs      []Run       // every ingest and resolve run, in start order
	norm      *normalize.Normalizer
	normErr   error
}

// ErrNoPolicy is returned by Load when the database holds no normalization
// under the requested policy (or no policy at all: an empty database).
var ErrNoPolicy = errors.New("no such policy in the database")

// Source is what Load and LoadGroups read: the policies and runs to
// choose among and warn of, and a scan of every citation.
type Source interface {
	store.Catalog
	store.Scanner
}

// Load reads the citations of src with their normalizations under policy,
// given as "name@version", "name", a digest, or "" for the policy of the
// most recent ingest run: one scan, then every row's whole citation
// (store.FieldCitation, store.FieldDetail), built on every core.
func Load(ctx context.Context, src Source, policy string) (*Snapshot, error) {
	snap, err := choose(ctx, src, policy)
	if err != nil {
		return nil, err
	}
	n := 0
	texts, err := src.Scan(ctx, snap.Policy.Digest, store.FieldCitation|store.FieldDetail, func(*store.Row) error {
		n++
		return nil
	})
	if err != nil {
		return nil, err
	}
	cits := make([]Citation, n)
	snap.Citations = make([]*Citation, n)
	parallel(n, func(_, lo, hi int) {
		rows := make([]int32, hi-lo)
		for i := range rows {
			rows[i] = int32(lo + i)
		}
		texts.Citations(rows, cits[lo:hi])
		for i := lo; i < hi; i++ {
			snap.Citations[i] = &cits[i]
		}
	})
	return snap, nil
}

// choose reads the policies and runs of c into a Snapshot and picks the
// policy wanted (as Load takes it).
func choose(ctx context.Context, c store.Catalog, want string) (*Snapshot, error) {
	pols, err := c.StoredPolicies(ctx)
	if err != nil {
		return nil, err
	}
	snap := &Snapshot{Policies: pols}
	if snap.Runs, err = c.Runs(ctx); err != nil {
		return nil, err
	}
	if snap.Policy, err = choosePolicy(pols, want); err != nil {
		return nil, err
	}
	return snap, nil
}

// choosePolicy picks the policy wanted (as Load takes it) among pols and
// verifies its stored text (verifyPolicy).
func choosePolicy(pols []PolicyRef, want string) (PolicyRef, error) {
	p, err := pickPolicy(pols, want)
	if err == nil {
		err = verifyPolicy(p)
	}
	return p, err
}

// verifyPolicy checks the stored text of a policy against the name,
// version and digest stored beside it: keys, groups and the normalizer
// rebuilt from the text depend on it, and a text damaged on disk would
// give answers under another policy than the one named. The digest is
// compared when this build's engine is the one the policy was stored
// with (the digest covers the engine too). A mismatch wraps
// store.ErrDamaged.
// parsed holds the stored policy texts parsed so far: a server reads a
// lineage per page, and parsing the policy's TOML twice a lineage was a
// tenth of its time. A Policy is immutable once parsed; a database holds
// few policies, and the memo is emptied when it reaches maxParsed.
var parsed struct {
	sync.Mutex
	m map[[2]string]parsedPolicy
}

type parsedPolicy struct {
	p   *normalize.Policy
	err error
}

const maxParsed = 32

// parseStored parses a policy's stored text, as normalize.ParsePolicy
// does, once per text and source.
func parseStored(text, source string) (*normalize.Policy, error) {
	k := [2]string{text, source}
	parsed.Lock()
	r, ok := parsed.m[k]
	parsed.Unlock()
	if ok {
		return r.p, r.err
	}
	r.p, r.err = normalize.ParsePolicy([]byte(text), source)
	parsed.Lock()
	if parsed.m == nil || len(parsed.m) >= maxParsed {
		parsed.m = map[[2]string]parsedPolicy{}
	}
	parsed.m[k] = r
	parsed.Unlock()
	return r.p, r.err
}

func verifyPolicy(p PolicyRef) error {
	if p.Text == "" {
		return nil // older databases did not store it; Normalizer says so
	}
	pol, err := parseStored(p.Text, "database:"+p.String())
	if err != nil {
		return fmt.Errorf("policy %s: its stored text does not parse: %v: %w", p, err, store.ErrDamaged)
	}
	engine := "+" + normalize.EngineFingerprint()
	switch {
	case pol.Name() != p.Name || !strings.HasPrefix(p.Version, pol.DeclaredVersion()+"+"):
		return fmt.Errorf("policy %s: its stored text is of policy %s version %s: %w", p, pol.Name(), pol.DeclaredVersion(), store.ErrDamaged)
	case p.Version == pol.DeclaredVersion()+engine && pol.Digest() != p.Digest:
		return fmt.Errorf("policy %s: its stored text has digest %s, but the database says %s: %w", p, pol.Digest(), p.Digest, store.ErrDamaged)
	}
	return nil
}

func pickPolicy(pols []PolicyRef, want string) (PolicyRef, error) {
	switch {
	case len(pols) == 0 && want == "":
		// An empty database is valid: no citation is normalized under
		// the zero policy, so every count is zero.
		return PolicyRef{}, nil
	case len(pols) == 0:
		return PolicyRef{}, fmt.Errorf("%w: %q (the database has no normalization policy: is it empty?)", ErrNoPolicy, want)
	case want == "":
		return pols[len(pols)-1], nil
	}
	var names []string
	for _, p := range pols {
		if want == p.Digest || want == p.String() || want == p.Name+"@"+strings.SplitN(p.Version, "+", 2)[0] {
			return p, nil
		}
		names = append(names, p.String())
	}
	var byName []PolicyRef
	for _, p := range pols {
		if p.Name == want {
			byName = append(byName, p)
		}
	}
	if len(byName) > 0 {
		return byName[len(byName)-1], nil
	}
	return PolicyRef{}, fmt.Errorf("%w: %q (the database has %s)", ErrNoPolicy, want, strings.Join(names, ", "))
}

// Normalizer returns a normalizer for the snapshot's policy, rebuilt from
// the policy text stored in the database, to place URLs that were not
// cited (canonical and relation targets, redirect destinations) among the
// groups.
func (s *Snapshot) Normalizer() (*normalize.Normalizer, error) {
	if s.norm != nil || s.normErr != nil {
		return s.norm, s.normErr
	}
	if s.Policy.Text == "" {
		s.normErr = fmt.Errorf("policy %s: the database does not hold its text", s.Policy)
		return nil, s.normErr
	}
	p, err := parseStored(s.Policy.Text, "database:"+s.Policy.String())
	if err == nil {
		s.norm, err = normalize.New(p, nil)
	}
	s.normErr = err
	return s.norm, err
}

// EngineChanged reports whether the running normalization engine differs
// from the one the snapshot's policy was applied with: keys computed now
// for uncited URLs could then differ from stored keys.
func (s *Snapshot) EngineChanged() bool {
	n, err := s.Normalizer()
	return err == nil && n.Policy().Digest() != s.Policy.Digest
}

// workers, parallel, sortParallel and sortByText are internal/cores',
// under the names the grouping engine and its tests use.
func workers() int                                    { return cores.N() }
func parallel(n int, fn func(w, lo, hi int))          { cores.Split(n, fn) }
func sortParallel[T any](s []T, cmp func(a, b T) int) { cores.Sort(s, cmp) }
func sortByText[T any](s []T, text func(T) string)    { cores.SortByText(s, text) }

// PolicyOf returns the policy that want names among those c stores (as
// Load takes it: "name@version", "name", a digest, or "" for the policy of
// the most recent ingest run), its stored text verified.
func PolicyOf(ctx context.Context, c store.Catalog, want string) (PolicyRef, error) {
	snap, err := choose(ctx, c, want)
	if err != nil {
		return PolicyRef{}, err
	}
	return snap.Policy, nil
}
