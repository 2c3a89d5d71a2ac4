package storetest

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// Memory keeps a grouping view of every policy it holds, made on demand
// from its own scan (store.ScanViewRows): the reference the bbolt
// backend's kept view is compared with.
var _ store.GroupView = (*Memory)(nil)

// viewRows returns every row of the view of policy d, in key then
// citation id order.
func (m *Memory) viewRows(ctx context.Context, d string) ([]store.ViewRow, error) {
	m.mu.Lock()
	_, ok := m.policies[d]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("policy %s: %w", d, store.ErrNoView)
	}
	var rows []store.ViewRow
	err := store.ScanViewRows(ctx, m, d, func(r store.ViewRow) error {
		rows = append(rows, r)
		return nil
	})
	slices.SortFunc(rows, func(a, b store.ViewRow) int {
		return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.CitationID, b.CitationID))
	})
	return rows, err
}

// ViewKeyOf is the key of a URL under a stored policy's text, as
// grouping's keyOf gives it: "" for a URL the policy rejects, the URL
// itself when the text does not parse.
func ViewKeyOf(pol store.PolicyRef) func(string) string {
	p, err := normalize.ParsePolicy([]byte(pol.Text), "database:"+pol.String())
	var n *normalize.Normalizer
	if err == nil {
		n, err = normalize.New(p, nil)
	}
	return func(u string) string {
		if err != nil {
			return u
		}
		res, nerr := n.Normalize(u)
		if nerr != nil {
			return ""
		}
		return res.Key
	}
}

// HasView implements store.GroupView: every policy stored has one.
func (m *Memory) HasView(ctx context.Context, d string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.policies[d]
	return ok, ctx.Err()
}

// KeyRows implements store.GroupView.
func (m *Memory) KeyRows(ctx context.Context, d, key string) ([]store.ViewRow, error) {
	rows, err := m.viewRows(ctx, d)
	var out []store.ViewRow
	for _, r := range rows {
		if r.State == store.RowKeyed && r.Key == key {
			out = append(out, r)
		}
	}
	return out, err
}

// RowsAfter implements store.GroupView.
func (m *Memory) RowsAfter(ctx context.Context, d string, after *store.RowPos, limit int) ([]store.ViewRow, error) {
	rows, err := m.viewRows(ctx, d)
	var out []store.ViewRow
	for _, r := range rows {
		if after != nil && cmp.Or(cmp.Compare(r.Key, after.Key), cmp.Compare(r.CitationID, after.CitationID)) <= 0 {
			continue
		}
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, r)
	}
	return out, err
}

// keysWhere returns the keys of the keyed rows of which has says true.
func (m *Memory) keysWhere(ctx context.Context, d string, has func(store.ViewRow) bool) ([]string, error) {
	rows, err := m.viewRows(ctx, d)
	var out []string
	for _, r := range rows {
		if r.State == store.RowKeyed && has(r) {
			out = append(out, r.Key)
		}
	}
	return found(out), err
}

// KeysOfID implements store.GroupView.
func (m *Memory) KeysOfID(ctx context.Context, d, id string) ([]string, error) {
	return m.keysWhere(ctx, d, func(r store.ViewRow) bool {
		sum := sha256.Sum256([]byte(r.Key))
		return "g-"+hex.EncodeToString(sum[:6]) == id
	})
}

func anyEvidence(r store.ViewRow, has func(store.ViewEvidence) bool) bool {
	return slices.ContainsFunc(r.Evidence, has)
}

// KeysByContent implements store.GroupView.
func (m *Memory) KeysByContent(ctx context.Context, d, hash string) ([]string, error) {
	return m.keysWhere(ctx, d, func(r store.ViewRow) bool {
		return hash != "" && anyEvidence(r, func(e store.ViewEvidence) bool { return e.Content == hash })
	})
}

// KeysByDigest implements store.GroupView.
func (m *Memory) KeysByDigest(ctx context.Context, d, digest string) ([]string, error) {
	return m.keysWhere(ctx, d, func(r store.ViewRow) bool {
		return digest != "" && anyEvidence(r, func(e store.ViewEvidence) bool { return e.Digest == digest })
	})
}

// KeysBySimBlock implements store.GroupView.
func (m *Memory) KeysBySimBlock(ctx context.Context, d string, block int, bits uint16) ([]string, error) {
	if block < 0 || block > 3 {
		return nil, fmt.Errorf("simhash block %d: want 0 to 3", block)
	}
	return m.keysWhere(ctx, d, func(r store.ViewRow) bool {
		return anyEvidence(r, func(e store.ViewEvidence) bool { return e.HasSim && uint16(e.SimHash>>(16*block)) == bits })
	})
}

// pointing returns the keys of keyed rows with a URL of urls(row) whose
// key under the policy is target, other than target.
func (m *Memory) pointing(ctx context.Context, d, target string, urls func(store.ViewRow) []string) ([]string, error) {
	m.mu.Lock()
	pol := m.policies[d]
	m.mu.Unlock()
	keyOf := ViewKeyOf(pol)
	return m.keysWhere(ctx, d, func(r store.ViewRow) bool {
		return r.Key != target && slices.ContainsFunc(urls(r), func(u string) bool { return keyOf(u) == target })
	})
}

// RedirectSources implements store.GroupView.
func (m *Memory) RedirectSources(ctx context.Context, d, target string) ([]string, error) {
	return m.pointing(ctx, d, target, func(r store.ViewRow) []string { return r.Redirects })
}

// RelationSources implements store.GroupView.
func (m *Memory) RelationSources(ctx context.Context, d, target string) ([]string, error) {
	return m.pointing(ctx, d, target, func(r store.ViewRow) []string { return r.Links })
}
