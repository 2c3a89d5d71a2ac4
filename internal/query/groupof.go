package query

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
)

// This file answers for one review group (GroupOf) without grouping the
// whole database: from a grouping view kept at ingest (GroupView), it reads
// the group's neighbourhood (what its verdict, reasons, relations and
// review mark depend on), makes grouping's facts of those citations alone
// and runs the engine of grouping.go on them. The group it returns is the
// full report's, byte for byte as JSON (TestGroupOfMatchesReport).

// GroupView is a database's grouping views: per policy (by digest), the
// facts grouping reads of every keyed citation, by key, and postings from
// evidence and URLs to the keys that carry them. It reads one consistent
// view of the database. Every []string it returns is sorted and without
// repeats. URLs are posted under the key the policy gives them, as the
// engine looks them up (keyOf), not as raw text.
type GroupView interface {
	// HasView reports whether the database keeps a complete view for the
	// policy.
	HasView(ctx context.Context, policyDigest string) (bool, error)
	// KeyRows returns the keyed citations (normalized under the policy and
	// not rejected) whose comparison key is exactly key, in citation id
	// order.
	KeyRows(ctx context.Context, policyDigest, key string) ([]ViewRow, error)
	// KeysOfID returns every cited key k whose group id would be id
	// (groupID(k)): any key may be the smallest of its group.
	KeysOfID(ctx context.Context, policyDigest, id string) ([]string, error)
	// RedirectSources returns the cited keys other than target with a
	// keyed citation that has a same-host redirect (store.Row.Redirects)
	// whose final URL the policy normalizes to target.
	RedirectSources(ctx context.Context, policyDigest, target string) ([]string, error)
	// RelationSources returns the cited keys with a keyed citation that
	// points at target (the policy's key of the URL) by a redirected
	// retrieval's final URL (any host), a canonical declaration or a
	// relation, declared or detected.
	RelationSources(ctx context.Context, policyDigest, target string) ([]string, error)
	// KeysByContent and KeysByDigest return the cited keys with a keyed
	// citation one of whose successful retrievals (store.Row.Evidence) has
	// this content hash, or this text digest.
	KeysByContent(ctx context.Context, policyDigest, hash string) ([]string, error)
	KeysByDigest(ctx context.Context, policyDigest, digest string) ([]string, error)
	// KeysBySimBlock returns the cited keys with a keyed citation one of
	// whose successful retrievals has a SimHash v with
	// uint16(v>>(16*block)) == bits (block 0 to 3).
	KeysBySimBlock(ctx context.Context, policyDigest string, block int, bits uint16) ([]string, error)
}

// ViewRow is one citation's grouping facts as the view keeps them
// (store.ViewRow: store.Row with texts for handles); GroupOf reads keyed
// rows only.
type ViewRow = store.ViewRow

// ViewEvidence is store.Evidence with texts (store.ViewEvidence).
type ViewEvidence = store.ViewEvidence

// ViewSource is what GroupOf reads a group from when the database keeps a
// view: the catalog, the view, and whole citations of the members
// (store.Lookup.Citations).
type ViewSource interface {
	store.Catalog
	GroupView
	Citations(ctx context.Context, policyDigest string, ids []string) ([]*Citation, error)
}

// ErrNoGroup is returned by GroupOf for a key no citation has under the
// policy, or an id no group has.
var ErrNoGroup = store.ErrNoGroup

// GroupAnswer is one review group, as the full report has it.
type GroupAnswer struct {
	Policy PolicyRef
	Group  *Group
	// Listed says whether the report under the options asked lists the
	// group (GroupOptions: MinSize, Verdict, Review); GroupOf returns the
	// group either way.
	Listed bool
	// FromView says the answer was read from the grouping view, not from
	// a grouping of the whole database.
	FromView bool
	Warnings []string
}

// IsGroupID reports whether s has the form of a group id ("g-" and 12
// lowercase hex digits); no comparison key has it (a key has a scheme).
func IsGroupID(s string) bool {
	if len(s) != 14 || !strings.HasPrefix(s, "g-") {
		return false
	}
	for _, c := range s[2:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// GroupOf returns the review group of a comparison key, or the group with
// an id (IsGroupID), under policy (as Load takes it) and opts, exactly as
// the full report (LoadGroups) has it. When src is a ViewSource keeping a
// view of the policy, and this build's normalization engine is the one
// the policy's keys were made with (the view's URL postings are keys of
// that engine), it reads only the group's neighbourhood; otherwise it
// groups the whole database. It reads; it never writes.
func GroupOf(ctx context.Context, src Source, policy, keyOrID string, opts GroupOptions) (*GroupAnswer, error) {
	if vs, ok := src.(ViewSource); ok {
		// On one read view when the backend gives one, so that the view's
		// rows and the citations they name are read from the same state.
		var a *GroupAnswer
		var err error
		v, viewer := src.(store.Viewer)
		switch {
		case viewer:
			err = v.View(ctx, func(r store.Reader) error {
				in, ok := r.(ViewSource)
				if !ok {
					return errNotInView
				}
				a, err = fromView(ctx, in, policy, keyOrID, opts)
				return err
			})
			if errors.Is(err, errNotInView) {
				a, err = fromView(ctx, vs, policy, keyOrID, opts)
			}
		default:
			a, err = fromView(ctx, vs, policy, keyOrID, opts)
		}
		if err != nil || a != nil {
			return a, err
		}
	}
	set, err := LoadGroups(ctx, src, policy, opts)
	if err != nil {
		return nil, err
	}
	return set.GroupOf(ctx, keyOrID)
}

// errNotInView says a backend's read view is not a ViewSource although the
// backend is: GroupOf then reads through the backend itself.
var errNotInView = errors.New("the read view keeps no grouping view")

// fromView answers GroupOf from vs's grouping view of the policy, or
// returns nil when vs keeps none usable: none for the policy, or one whose
// URL postings this build's normalization engine would key otherwise.
func fromView(ctx context.Context, vs ViewSource, policy, keyOrID string, opts GroupOptions) (*GroupAnswer, error) {
	snap, err := usableView(ctx, vs, policy)
	if snap == nil || err != nil {
		return nil, err
	}
	return viewGroupOf(ctx, vs, snap, keyOrID, opts)
}

// usableView returns the snapshot of policy (as Load takes it) when vs
// keeps a grouping view of it that this build can read, nil when it keeps
// none: none for the policy, a policy this build cannot load, or a view
// whose URL postings this build's normalization engine would key
// otherwise.
func usableView(ctx context.Context, vs ViewSource, policy string) (*Snapshot, error) {
	snap, err := choose(ctx, vs, policy)
	if err != nil {
		return nil, err
	}
	if snap.Policy.Digest == "" {
		return nil, nil
	}
	has, err := vs.HasView(ctx, snap.Policy.Digest)
	if err != nil {
		return nil, fmt.Errorf("query: grouping view of policy %s: %w", snap.Policy, err)
	}
	if _, nerr := snap.Normalizer(); !has || nerr != nil || snap.EngineChanged() {
		return nil, nil
	}
	return snap, nil
}

// GroupOf returns the group of a key, or the group with an id, of the
// whole set, as GroupOf does.
func (s *GroupSet) GroupOf(ctx context.Context, keyOrID string) (*GroupAnswer, error) {
	if s.v != nil {
		return GroupOf(ctx, s.v.src, s.v.snap.Policy.Digest, keyOrID, s.v.opts)
	}
	g := s.g
	i := -1
	if IsGroupID(keyOrID) {
		i = slices.IndexFunc(g.groups, func(gr *group) bool { return gr.id == keyOrID })
	} else if ref, ok := g.keyIndex[keyOrID]; ok && int(ref) < len(g.f.keys) {
		i = int(g.groupOfKey[ref])
	}
	if i < 0 {
		return nil, noGroup(g.policy, keyOrID)
	}
	return g.answer(ctx, i, false)
}

// answer builds group i of g whole, and says whether the options list it.
func (g *grouping) answer(ctx context.Context, i int, fromView bool) (*GroupAnswer, error) {
	gr := g.groups[i]
	if g.opts.Review && g.opts.MinSize > 1 && g.reviewed == nil {
		if err := g.review(ctx); err != nil {
			return nil, err
		}
	}
	return &GroupAnswer{Policy: g.policy, Group: g.build(0, gr, true), Listed: g.lists(i, gr), FromView: fromView, Warnings: g.warnings}, nil
}

func noGroup(p PolicyRef, keyOrID string) error {
	if IsGroupID(keyOrID) {
		return fmt.Errorf("%w: no group has id %s under policy %s", ErrNoGroup, keyOrID, p)
	}
	return fmt.Errorf("%w: no citation has comparison key %q under policy %s", ErrNoGroup, keyOrID, p)
}

// viewGroupOf answers GroupOf from vs's view of snap's policy.
func viewGroupOf(ctx context.Context, vs ViewSource, snap *Snapshot, keyOrID string, opts GroupOptions) (*GroupAnswer, error) {
	if !IsGroupID(keyOrID) {
		return viewGroupOfKey(ctx, vs, snap, keyOrID, opts)
	}
	keys, err := vs.KeysOfID(ctx, snap.Policy.Digest, keyOrID)
	if err != nil {
		return nil, fmt.Errorf("query: keys of group id %s: %w", keyOrID, err)
	}
	// A group's id is its smallest key's: of the keys with this id (two
	// only if 48 bits of SHA-256 collide), the one that is the smallest
	// of its group.
	for _, k := range keys {
		a, err := viewGroupOfKey(ctx, vs, snap, k, opts)
		switch {
		case errors.Is(err, ErrNoGroup):
			continue
		case err != nil:
			return nil, err
		case a.Group.ID == keyOrID && a.Group.Key == k:
			return a, nil
		}
	}
	return nil, noGroup(snap.Policy, keyOrID)
}

// neighbourhood gathers the keys a group's answer depends on. Each key read
// has its redirect component closed (every key joined to it, and for every
// target it or they redirect to, every source, or their number when they
// are more than maxShared), so that the engine, run on the rows read,
// finds every group among them as the whole database has it.
type neighbourhood struct {
	ctx       context.Context
	v         ViewSource
	digest    string
	keyOf     func(string) string
	maxShared int
	rows      map[string][]ViewRow // every key read (nil: no citation has it)
	targets   map[string]bool      // targets whose sources were read
	over      map[string]int       // sources of targets with more than maxShared
	queue     []string
	incoming  []string // keys whose relations point at the group
	// pre holds rows already read (a batch of the full listing's, by
	// key), which add takes instead of reading them again.
	pre map[string][]ViewRow
	// sourced, when not nil, holds every key that some key redirects to
	// (sharedTexts.targets): target looks up the sources of those only.
	sourced *valueFilter
}

// add reads key k and closes its component, with everything queued.
func (n *neighbourhood) add(keys ...string) error {
	n.queue = append(n.queue, keys...)
	for len(n.queue) > 0 {
		k := n.queue[len(n.queue)-1]
		n.queue = n.queue[:len(n.queue)-1]
		if _, ok := n.rows[k]; ok {
			continue
		}
		rows, ok := n.pre[k]
		if !ok {
			var err error
			if rows, err = n.v.KeyRows(n.ctx, n.digest, k); err != nil {
				return fmt.Errorf("query: view rows of key %q: %w", k, err)
			}
		}
		n.rows[k] = rows
		if err := n.target(k); err != nil {
			return err
		}
		for _, r := range rows {
			for _, u := range r.Redirects {
				if t := n.keyOf(u); t != "" && t != k {
					if err := n.target(t); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// target reads the keys that redirect to t: a target of at most maxShared
// joins them, so they and t are queued; past it only their number counts.
func (n *neighbourhood) target(t string) error {
	if n.targets[t] {
		return nil
	}
	n.targets[t] = true
	if n.sourced != nil && !n.sourced.has(t) {
		return nil // no key redirects to t
	}
	srcs, err := n.v.RedirectSources(n.ctx, n.digest, t)
	if err != nil {
		return fmt.Errorf("query: keys redirecting to %q: %w", t, err)
	}
	switch {
	case len(srcs) > n.maxShared:
		n.over[t] = len(srcs)
	case len(srcs) > 0:
		n.queue = append(append(n.queue, t), srcs...)
	}
	return nil
}

// viewGroupOfKey answers GroupOf for a key from the view.
func viewGroupOfKey(ctx context.Context, vs ViewSource, snap *Snapshot, key string, opts GroupOptions) (*GroupAnswer, error) {
	n, cits, err := gather(ctx, vs, snap, key, opts)
	if err != nil {
		return nil, err
	}
	if len(n.rows[key]) == 0 {
		return nil, noGroup(snap.Policy, key)
	}
	f, err := viewFacts(n, cits)
	if err != nil {
		return nil, err
	}
	g := newGrouping(f, snap, opts)
	i := int(g.groupOfKey[g.keyIndex[key]])
	// Only this group's relations and those of the groups pointing at it
	// can mark it for review.
	g.reviewOnly = map[int32]bool{int32(i): true}
	for _, k := range n.incoming {
		if ref, ok := g.keyIndex[k]; ok && g.groupOfKey[ref] >= 0 {
			g.reviewOnly[g.groupOfKey[ref]] = true
		}
	}
	a, err := g.answer(ctx, i, true)
	if err == nil {
		err = cits.failed()
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}

// neighbourhoodOf returns every key the answer for key reads (cited or
// not), sorted.
func neighbourhoodOf(ctx context.Context, vs ViewSource, snap *Snapshot, key string, opts GroupOptions) ([]string, error) {
	n, _, err := gather(ctx, vs, snap, key, opts)
	if err != nil {
		return nil, err
	}
	return slices.Sorted(mapKeys(n.rows)), nil
}

// gather reads the neighbourhood of key's group: its component, the
// groups sharing its evidence, the groups its relations point at and,
// when the options mark groups for review, those pointing at it.
func gather(ctx context.Context, vs ViewSource, snap *Snapshot, key string, opts GroupOptions) (*neighbourhood, *citationCache, error) {
	return gatherKeys(ctx, vs, snap, []string{key}, nil, opts, nil)
}

// sharedTexts are the content hashes and text digests two keys or more
// may share, and the keys that may be redirect targets and relation
// targets (sharedLister): gatherKeys looks up only those.
type sharedTexts struct{ content, digest, targets, pointed *valueFilter }

// gatherKeys reads the neighbourhood of the groups of several keys at
// once, as gather does for one: pre holds the rows of keys already read.
// With one key that no citation has, it returns after reading it.
//
// shared, when not nil, holds every content hash and text digest that
// two keys or more share: the others, which only the key whose row gave
// them has, are not looked up; and every redirect target and relation
// target: the sources of other keys are not looked up.
func gatherKeys(ctx context.Context, vs ViewSource, snap *Snapshot, keys []string, pre map[string][]ViewRow, opts GroupOptions, shared *sharedTexts) (*neighbourhood, *citationCache, error) {
	norm, _ := snap.Normalizer()
	n := &neighbourhood{ctx: ctx, v: vs, digest: snap.Policy.Digest, keyOf: keyOfFunc(norm), maxShared: opts.MaxShared,
		rows: map[string][]ViewRow{}, targets: map[string]bool{}, over: map[string]int{}, pre: pre}
	if n.maxShared <= 0 {
		n.maxShared = model.DefaultMaxShared
	}
	if shared != nil {
		n.sourced = shared.targets
	}
	cits := &citationCache{ctx: ctx, v: vs, digest: n.digest, policy: &snap.Policy, byID: map[string]*Citation{}}
	// The groups' own keys: the components of the keys.
	if err := n.add(keys...); err != nil {
		return nil, nil, err
	}
	if len(keys) == 1 && len(n.rows[keys[0]]) == 0 {
		return n, cits, nil
	}
	n.pre = nil
	own := slices.Sorted(mapKeys(n.rows))
	// The groups that share its evidence: every key of each of its content
	// hashes, text digests and SimHash blocks (SimHashes within
	// extract.NearThreshold bits agree on one of the four blocks).
	for _, k := range own {
		for _, r := range n.rows[k] {
			for _, e := range r.Evidence {
				var more []string
				var err error
				if e.Content != "" && (shared == nil || shared.content.has(e.Content)) {
					if more, err = vs.KeysByContent(ctx, n.digest, e.Content); err != nil {
						return nil, nil, fmt.Errorf("query: keys of content hash %s: %w", e.Content, err)
					}
					if err := n.add(more...); err != nil {
						return nil, nil, err
					}
				}
				if e.Digest != "" && (shared == nil || shared.digest.has(e.Digest)) {
					if more, err = vs.KeysByDigest(ctx, n.digest, e.Digest); err != nil {
						return nil, nil, fmt.Errorf("query: keys of text digest %s: %w", e.Digest, err)
					}
					if err := n.add(more...); err != nil {
						return nil, nil, err
					}
				}
				if e.HasSim {
					for b := range 4 {
						if more, err = vs.KeysBySimBlock(ctx, n.digest, b, uint16(e.SimHash>>(16*b))); err != nil {
							return nil, nil, fmt.Errorf("query: keys of SimHash block %d: %w", b, err)
						}
						if err := n.add(more...); err != nil {
							return nil, nil, err
						}
					}
				}
			}
		}
	}
	// The groups its relations point at.
	for _, k := range own {
		for _, r := range n.rows[k] {
			for _, u := range r.Links {
				if t := n.keyOf(u); t != "" {
					if err := n.add(t); err != nil {
						return nil, nil, err
					}
				}
			}
		}
	}
	// The groups whose relations point at it, for its review mark.
	if opts.Review && opts.MinSize > 1 {
		for _, k := range own {
			if shared != nil && !shared.pointed.has(k) {
				continue // no relation points at k
			}
			srcs, err := vs.RelationSources(ctx, n.digest, k)
			if err != nil {
				return nil, nil, fmt.Errorf("query: keys pointing at %q: %w", k, err)
			}
			if err := n.add(srcs...); err != nil {
				return nil, nil, err
			}
			n.incoming = append(n.incoming, srcs...)
		}
	}
	return n, cits, nil
}

// citationCache reads whole citations through the source once each; fill
// calls it on several goroutines, and cannot return an error: the first
// one is kept for failed.
type citationCache struct {
	ctx    context.Context
	v      ViewSource
	digest string
	// lean, when set, reads the citations lean (memberLookup), with
	// what relations are made of: for a lineage, which builds a group
	// for its relations only.
	lean memberLookup
	// shown, when set, reads the citations as a listed group shows them:
	// for the full listing from a grouping view.
	shown shownLookup
	// members, when set, takes a row's member record (ViewRow.Member),
	// when it has one, for its citation instead of reading it: for the
	// full listing, which shows no more than the record holds.
	members bool
	// policy is the view's policy, the Policy of the records' normalizations.
	policy *PolicyRef
	mu     sync.Mutex
	byID   map[string]*Citation
	err    error
}

func (c *citationCache) get(ids []string) ([]*Citation, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var missing []string
	for _, id := range ids {
		if _, ok := c.byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		var cs []*Citation
		var err error
		switch {
		case c.lean != nil:
			cs, err = c.lean.Members(c.ctx, c.digest, missing)
		case c.shown != nil:
			cs, err = c.shown.Shown(c.ctx, c.digest, missing)
		default:
			cs, err = c.v.Citations(c.ctx, c.digest, missing)
		}
		if err != nil {
			return nil, fmt.Errorf("query: reading citations: %w", err)
		}
		for i, id := range missing {
			if cs[i] == nil || cs[i].Norm == nil {
				return nil, fmt.Errorf("query: the grouping view names citation %s, which the database does not hold under this policy (rebuild the view): %w", id, store.ErrDamaged)
			}
			c.byID[id] = cs[i]
		}
	}
	out := make([]*Citation, len(ids))
	for i, id := range ids {
		out[i] = c.byID[id]
	}
	return out, nil
}

func (c *citationCache) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// viewFacts makes grouping's facts of the rows n read, numbered in
// citation id order as a scan numbers them.
func viewFacts(n *neighbourhood, cits *citationCache) (*facts, error) {
	type keyed struct {
		key string
		row *ViewRow
	}
	var all []keyed
	for k, rows := range n.rows {
		for i := range rows {
			all = append(all, keyed{k, &rows[i]})
		}
	}
	slices.SortFunc(all, func(a, b keyed) int { return strings.Compare(a.row.CitationID, b.row.CitationID) })
	f := &facts{n: len(all), state: make([]int8, len(all)), key: make([]int32, len(all)), content: make([]bool, len(all)), related: make([]bool, len(all)),
		hashOff: make([]int32, len(all)+1), redirOff: make([]int32, len(all)+1), evOff: make([]int32, len(all)+1)}
	keyRef, retRef, hashRef, digestRef := map[string]int32{}, map[string]int32{}, map[string]int32{}, map[string]int32{}
	var hashes, digests []string
	refOf := func(refs map[string]int32, texts *[]string, v string) int32 {
		if v == "" {
			return -1
		}
		ref, ok := refs[v]
		if !ok {
			ref = int32(len(refs))
			refs[v] = ref
			if texts != nil {
				*texts = append(*texts, v)
			}
		}
		return ref
	}
	ids := make([]string, len(all))
	for i, kr := range all {
		r := kr.row
		if i > 0 && ids[i-1] == r.CitationID {
			return nil, fmt.Errorf("query: the grouping view holds citation %s under two keys (rebuild the view): %w", r.CitationID, store.ErrDamaged)
		}
		ids[i] = r.CitationID
		f.state[i] = stateKeyed
		f.key[i] = refOf(keyRef, &f.keys, kr.key)
		f.content[i] = r.KeyContent
		f.related[i] = r.Related
		f.redirURL = append(f.redirURL, r.Redirects...)
		for _, e := range r.Evidence {
			it := evItem{ret: refOf(retRef, nil, e.Retrieval), hash: refOf(hashRef, &hashes, e.Content), digest: refOf(digestRef, &digests, e.Digest), sim: e.SimHash, hasSim: e.HasSim}
			if it.hash >= 0 {
				f.hashRef = append(f.hashRef, it.hash)
			}
			f.ev = append(f.ev, it)
		}
		f.hashOff[i+1], f.redirOff[i+1], f.evOff[i+1] = int32(len(f.hashRef)), int32(len(f.redirURL)), int32(len(f.ev))
	}
	f.hashText = func(ref int32) string { return hashes[ref] }
	f.digestText = func(ref int32) string { return digests[ref] }
	f.sourceCount = func(t string) (int, bool) {
		m, ok := n.over[t]
		return m, ok
	}
	keyOfRow := make([]string, len(all))
	for i, kr := range all {
		keyOfRow[i] = kr.key
	}
	// A row's member record stands for its citation (cits.members): it
	// is taken when the group is built, as most rows read for a batch's
	// neighbourhood are in groups it does not write.
	record := func(i int32) *Citation {
		if m := all[i].row.Member; cits.members && m != nil && m.Norm != nil {
			return m
		}
		return nil
	}
	f.fill = func(rows []int32, dst []Citation) {
		var want []string
		for _, i := range rows {
			if record(i) == nil {
				want = append(want, ids[i])
			}
		}
		var read []*Citation
		var err error
		if len(want) > 0 {
			read, err = cits.get(want)
		}
		cs := make([]*Citation, len(rows))
		for k, i := range rows {
			if m := record(i); m != nil {
				cs[k] = withPolicy(m, cits.policy)
			} else if err == nil {
				cs[k], read = read[0], read[1:]
			}
		}
		for k, i := range rows {
			if err == nil && cs[k].Norm.Key != keyOfRow[i] {
				err = fmt.Errorf("query: the grouping view has citation %s under key %q, the database under %q (rebuild the view): %w", ids[i], keyOfRow[i], cs[k].Norm.Key, store.ErrDamaged)
			}
			if err != nil {
				cits.mu.Lock()
				if cits.err == nil {
					cits.err = err
				}
				cits.mu.Unlock()
				// A stand-in that building can read: the answer is the error.
				dst[k] = Citation{ID: ids[i], Norm: &Normalization{Key: keyOfRow[i], Policy: &PolicyRef{}}}
				continue
			}
			dst[k] = *cs[k]
		}
	}
	return f, nil
}

// withPolicy returns member record m with its normalization's Policy set
// to pol (a record leaves it nil: it is its view's).
func withPolicy(m *Citation, pol *PolicyRef) *Citation {
	if m.Norm == nil || m.Norm.Policy == pol {
		return m
	}
	c := *m
	n := *m.Norm
	n.Policy = pol
	c.Norm = &n
	return &c
}

// GroupsAround returns the groups that keysOrIDs name (as GroupOf takes
// them) and the group of each citation in citationIDs (the group of its
// key under the policy), each as the full report has it, read from src's
// grouping view of the policy: a few reads each, whatever the size of the
// database, which is what recording or showing one decision needs. A
// key, id or citation with no group under the policy is left out; a
// group named twice is returned once. ok is false when src keeps no view
// usable for the policy: the caller then groups the whole database.
func GroupsAround(ctx context.Context, src Source, policy string, keysOrIDs, citationIDs []string, opts GroupOptions) (pol PolicyRef, groups []*Group, ok bool, err error) {
	vs, isView := src.(ViewSource)
	if !isView {
		return PolicyRef{}, nil, false, nil
	}
	snap, err := usableView(ctx, vs, policy)
	if snap == nil || err != nil {
		return PolicyRef{}, nil, false, err
	}
	sel := slices.Clone(keysOrIDs)
	if len(citationIDs) > 0 {
		cs, err := vs.Citations(ctx, snap.Policy.Digest, citationIDs)
		if err != nil {
			return PolicyRef{}, nil, false, err
		}
		for _, c := range cs {
			if c != nil && c.Norm != nil && c.Norm.Key != "" {
				sel = append(sel, c.Norm.Key)
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range sel {
		a, err := viewGroupOf(ctx, vs, snap, s, opts)
		switch {
		case errors.Is(err, ErrNoGroup):
			continue
		case err != nil:
			return PolicyRef{}, nil, false, err
		case !seen[a.Group.ID]:
			seen[a.Group.ID] = true
			groups = append(groups, a.Group)
		}
	}
	return snap.Policy, groups, true, nil
}

// ViewUsable reports whether src keeps a grouping view of policy (as Load
// takes it) that this build can read: GroupOf and LoadGroupsFromView then
// read it instead of grouping the whole database.
func ViewUsable(ctx context.Context, src Source, policy string) (bool, error) {
	vs, ok := src.(ViewSource)
	if !ok {
		return false, nil
	}
	snap, err := usableView(ctx, vs, policy)
	return snap != nil, err
}
