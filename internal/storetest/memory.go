package storetest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Memory is the reference backend: store.Backend over a few maps, written
// from the contracts in internal/store and nothing else. It is what a
// real backend's answers are compared with on data no fixture covers
// (see internal/graph/citestore's TestMatchesMemory), and it shows that the
// suite asks only what the interface promises. It is not for production:
// it keeps everything in memory and forgets it on exit.
type Memory struct {
	mu       sync.Mutex
	digest   map[string]string      // citation id -> digest
	raw      map[string][]string    // raw URL -> ids
	key      map[[2]string][]string // (policy digest, key) -> ids
	content  map[string][]string    // content hash -> ids
	policies map[string]model.PolicyRef
}

var _ store.Backend = (*Memory)(nil)

// NewMemory returns an empty Memory.
func NewMemory() *Memory {
	return &Memory{
		digest: map[string]string{}, raw: map[string][]string{}, key: map[[2]string][]string{},
		content: map[string][]string{}, policies: map[string]model.PolicyRef{},
	}
}

func found(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := slices.Clone(ids)
	slices.Sort(out)
	return slices.Compact(out)
}

// Digest implements store.Lookup.
func (m *Memory) Digest(ctx context.Context, id string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.digest[id]
	return d, ok, ctx.Err()
}

// ByRaw implements store.Lookup.
func (m *Memory) ByRaw(ctx context.Context, raw string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.raw[raw]), ctx.Err()
}

// ByKey implements store.Lookup.
func (m *Memory) ByKey(ctx context.Context, policyDigest, key string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.key[[2]string{policyDigest, key}]), ctx.Err()
}

// ByContent implements store.Lookup.
func (m *Memory) ByContent(ctx context.Context, hash string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return found(m.content[hash]), ctx.Err()
}

// Policies implements store.Lookup.
func (m *Memory) Policies(ctx context.Context) ([]model.PolicyRef, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := slices.Collect(maps.Values(m.policies))
	slices.SortFunc(out, func(a, b model.PolicyRef) int { return cmpString(a.Digest, b.Digest) })
	return out, ctx.Err()
}

// Append implements store.Appender: everything is checked and normalized
// first, then applied, so a failing batch leaves the maps as they were.
func (m *Memory) Append(ctx context.Context, b store.Batch) (int, error) {
	if b.Policy == nil {
		return 0, errors.New("append: no policy")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	type row struct {
		id, digest, raw, key, hash string
		keyed                      bool
	}
	var rows []row
	seen := map[string]string{}
	for _, r := range b.Records {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		id, digest := r.ID(), r.Digest()
		if d, ok := seen[id]; ok {
			if d != digest {
				return 0, &store.ConflictError{CitationID: id, Where: "the batch"}
			}
			continue
		}
		seen[id] = digest
		if d, ok := m.digest[id]; ok {
			if d != digest {
				return 0, &store.ConflictError{CitationID: id, Where: "the database"}
			}
			continue
		}
		n, err := normalize.New(b.Policy, &normalize.Options{Base: r.BaseURL})
		if err != nil {
			return 0, fmt.Errorf("append: citation %s: %w", id, err)
		}
		rw := row{id: id, digest: digest, raw: *r.RawURL}
		res, err := n.Normalize(rw.raw)
		var nerr *normalize.Error
		switch {
		case err == nil:
			rw.key, rw.keyed = res.Key, true
		case !errors.As(err, &nerr):
			return 0, fmt.Errorf("append: citation %s: %w", id, err)
		}
		if r.Retrieval != nil {
			rw.hash = r.Retrieval.ContentHash
		}
		rows = append(rows, rw)
	}
	for _, rw := range rows {
		m.digest[rw.id] = rw.digest
		m.raw[rw.raw] = append(m.raw[rw.raw], rw.id)
		if rw.keyed {
			k := [2]string{b.Policy.Digest(), rw.key}
			m.key[k] = append(m.key[k], rw.id)
		}
		if rw.hash != "" {
			m.content[rw.hash] = append(m.content[rw.hash], rw.id)
		}
	}
	m.policies[b.Policy.Digest()] = model.PolicyRef{Name: b.Policy.Name(), Version: b.Policy.Version(), Digest: b.Policy.Digest()}
	return len(rows), nil
}

// Check implements store.Checker: every id an index names is stored.
func (m *Memory) Check(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, idx := range []map[string][]string{m.raw, m.content} {
		for v, ids := range idx {
			for _, id := range ids {
				if _, ok := m.digest[id]; !ok {
					return fmt.Errorf("check: %q names citation %s, which is not stored", v, id)
				}
			}
		}
	}
	for k, ids := range m.key {
		for _, id := range ids {
			if _, ok := m.digest[id]; !ok {
				return fmt.Errorf("check: key %q names citation %s, which is not stored", k[1], id)
			}
		}
	}
	return ctx.Err()
}
