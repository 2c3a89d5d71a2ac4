package query

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/store"
)

// This file is the grouping engine behind Groups and GroupStream. It finds
// the groups on compact facts (integers, one row per citation), and builds
// the Citation values of a group's members only when the group is listed
// or has relations: over a whole database that is the difference between
// building a million Go values before grouping and building them one group
// at a time, on every core, while the output is written.

// Citation states in facts.
const (
	stateKeyed int8 = iota
	stateRejected
	stateUnnormalized
)

// facts is what grouping reads of every citation. Citations are numbered
// 0..n-1 in citation id order. Key and hash refs are small integers that
// are equal exactly when the strings are.
type facts struct {
	n       int
	state   []int8   // per citation
	key     []int32  // per keyed citation: its key's ref
	keys    []string // key text by ref
	content []bool   // per citation: its key needs content to compare (server-defined host rule)
	// The content hashes of citation i are hashRef[hashOff[i]:hashOff[i+1]];
	// the destinations of its same-host redirects are
	// redirURL[redirOff[i]:redirOff[i+1]].
	hashOff, redirOff []int32
	hashRef           []int32
	redirURL          []string
	hashText          func(ref int32) string
	// The text evidence of citation i's successful retrievals (evidence.go)
	// is ev[evOff[i]:evOff[i+1]]; its content hashes above are those of
	// its successful retrievals only, so an error page is never shared
	// content.
	evOff      []int32
	ev         []evItem
	digestText func(ref int32) string
	// related says whether a citation has anything relations reads
	// (redirects, canonical declarations, declared relations).
	related []bool
	// fill sets dst[k] to citation rows[k], for a group's members; it
	// is called on several goroutines at once.
	fill func(rows []int32, dst []Citation)
	// sourceCount, when set, says how many keys redirect to a target key
	// whose sources the facts hold only in part (GroupOf reads a group's
	// neighbourhood, not every citation): it returns false for a target
	// whose sources are all in the facts.
	sourceCount func(target string) (int, bool)
}

// keyOfFunc returns the key of a URL that may not be cited under norm ("" if
// norm rejects it; the URL itself when there is no normalizer). The
// normalizer is safe for concurrent use.
func keyOfFunc(norm *normalize.Normalizer) func(string) string {
	return func(u string) string {
		if norm == nil {
			return u
		}
		res, err := norm.Normalize(u)
		if err != nil {
			return ""
		}
		return res.Key
	}
}

// evItem is the content evidence of one successful retrieval: refs of its
// retrieval, content hash and text digest (-1 for none; equal refs exactly
// when the values are equal) and its SimHash.
type evItem struct {
	ret, hash, digest int32
	sim               uint64
	hasSim            bool
}

// relatedCitation reports whether relations reads anything of c.
func relatedCitation(c *Citation) bool {
	if len(c.Relations) > 0 {
		return true
	}
	for _, r := range c.Retrievals {
		if (r.FinalURL != "" && len(r.Hops) > 0) || len(r.Canonicals) > 0 {
			return true
		}
	}
	return false
}

// snapshotFacts derives the facts of a snapshot's citations.
func snapshotFacts(snap *Snapshot) *facts {
	n := len(snap.Citations)
	f := &facts{
		n: n, state: make([]int8, n), key: make([]int32, n), content: make([]bool, n), related: make([]bool, n),
		hashOff: make([]int32, n+1), redirOff: make([]int32, n+1), evOff: make([]int32, n+1),
		fill: func(rows []int32, dst []Citation) {
			for k, i := range rows {
				dst[k] = *snap.Citations[i]
			}
		},
	}
	keyRef, hashRef := map[string]int32{}, map[string]int32{}
	var hashes []string
	retRef, digestRef := map[string]int32{}, map[string]int32{}
	var digests []string
	refOf := func(refs map[string]int32, v string, add func()) int32 {
		if v == "" {
			return -1
		}
		ref, ok := refs[v]
		if !ok {
			ref = int32(len(refs))
			refs[v] = ref
			if add != nil {
				add()
			}
		}
		return ref
	}
	for i, c := range snap.Citations {
		switch {
		case c.Norm == nil:
			f.state[i] = stateUnnormalized
		case c.Norm.Rejected():
			f.state[i] = stateRejected
		default:
			ref, ok := keyRef[c.Norm.Key]
			if !ok {
				ref = int32(len(f.keys))
				keyRef[c.Norm.Key] = ref
				f.keys = append(f.keys, c.Norm.Key)
			}
			f.key[i] = ref
			f.content[i] = c.Norm.Compare == string(normalize.CompareContent)
		}
		for _, r := range c.Retrievals {
			if len(r.Hops) > 0 && r.FinalURL != "" && !r.CrossesHost() {
				f.redirURL = append(f.redirURL, r.FinalURL)
			}
			if !r.Successful() {
				continue
			}
			it := evItem{ret: refOf(retRef, r.Node, nil), hash: -1}
			if r.ContentHash != "" {
				it.hash = refOf(hashRef, r.ContentHash, func() { hashes = append(hashes, r.ContentHash) })
				f.hashRef = append(f.hashRef, it.hash)
			}
			var digest string
			digest, it.sim, it.hasSim = textEvidence(r)
			it.digest = refOf(digestRef, digest, func() { digests = append(digests, digest) })
			f.ev = append(f.ev, it)
		}
		f.hashOff[i+1], f.redirOff[i+1], f.evOff[i+1] = int32(len(f.hashRef)), int32(len(f.redirURL)), int32(len(f.ev))
		f.related[i] = relatedCitation(c)
	}
	f.hashText = func(ref int32) string { return hashes[ref] }
	f.digestText = func(ref int32) string { return digests[ref] }
	return f
}

// group is a group while it is worked out: members and keys as numbers.
type group struct {
	keys     []int32 // key refs, in key text order
	members  []int32 // citation numbers, in citation id order
	id       string
	redirect bool    // some key was joined by a same-host redirect
	hashes   []int32 // distinct content hash refs of the members
	related  bool    // some member has something relations reads
	verdict  string
	num      int32 // the group's number before the groups were sorted
	idx      int32 // the group's number once sorted
	// digests and sims are the distinct text digest refs and SimHashes of
	// the members' successful retrievals; confirmedBy and why say which
	// evidence decided the verdict (judge).
	digests     []int32
	sims        []uint64
	confirmedBy string
	why         string
}

// grouping is the engine's state once the groups are found.
type grouping struct {
	f          *facts
	opts       GroupOptions
	maxShared  int
	policy     PolicyRef
	keyOf      func(string) string
	warnings   []string
	incomplete []Run
	// reviewed says, by group number, which groups take part in a
	// relation that needs review, and relationCounts counts every group's
	// relations by type; review sets both when the options ask for it
	// (nil otherwise).
	reviewed       []bool
	relationCounts map[string]int
	// reviewOnly, when set, limits review to the groups it holds (by
	// group number): GroupOf needs the mark of one group, which only that
	// group's relations and those of the groups pointing at it can set,
	// and its neighbourhood may hold thousands of groups sharing a common
	// page. The relation counts are then partial.
	reviewOnly map[int32]bool
	// emit, when set, limits run to the groups it holds (by group
	// number), and review's counts to them: the full listing from a
	// grouping view (viewgroups.go) groups a batch of keys with their
	// neighbourhood, and writes and counts only the groups whose
	// smallest key is in the batch.
	emit map[int32]bool
	// nw, when positive, is how many workers review and run use, instead
	// of one per core: the full listing from a view runs a grouping per
	// core already.
	nw int

	keys       []string          // key text by ref: f.keys, then uncited redirect targets
	keyIndex   map[string]int32  // key text -> ref
	sources    map[int32]int     // redirect target ref -> how many keys redirect to it
	groupOfKey []int32           // key ref -> group number, or -1
	groups     []*group          // in key order
	hashGroups map[int32][]int32 // hash ref -> groups, for hashes of several groups
	sharedText map[string]int    // hash text -> groups, for hashes of several groups
	// digestGroups is, for text digests of several groups, those groups;
	// simGroups is, for every SimHash, the groups that have it; textLinks
	// are each group's same-text relations (findSameText).
	digestGroups map[int32][]int32
	simGroups    map[uint64][]int32
	textLinks    map[int32][]textLink
}

// newGrouping finds the groups of f.
func newGrouping(f *facts, snap *Snapshot, opts GroupOptions) *grouping {
	g := &grouping{f: f, opts: opts, maxShared: opts.MaxShared, policy: snap.Policy, incomplete: incompleteRuns(snap.Runs)}
	if g.maxShared <= 0 {
		g.maxShared = model.DefaultMaxShared
	}
	g.warnings = runWarnings(g.incomplete)
	norm, err := snap.Normalizer()
	switch {
	case snap.Policy.Node == "": // no policy in the database: nothing has a key
		norm = nil
		if f.n > 0 {
			g.warnings = append(g.warnings, fmt.Sprintf("the database holds no normalization policy: its %d citations are unnormalized (renormalize with a policy to group them)", f.n))
		}
	case err != nil:
		g.warnings = append(g.warnings, fmt.Sprintf("%v: redirect, canonical and relation targets are matched by exact key text only", err))
	case snap.EngineChanged():
		g.warnings = append(g.warnings, "this provgraph's normalization engine differs from the one the keys were made with: targets are normalized with the current one")
	}
	g.keyOf = keyOfFunc(norm)
	g.keys = slices.Clone(f.keys)
	// The index of key texts is made while the members are bucketed.
	var indexed sync.WaitGroup
	indexed.Add(1)
	go func() {
		defer indexed.Done()
		g.keyIndex = make(map[string]int32, len(g.keys))
		for ref, k := range g.keys {
			g.keyIndex[k] = int32(ref)
		}
	}()
	cited := len(f.keys)

	// Members of each cited key, in citation order (a counting sort).
	start := make([]int32, cited+1)
	for i := range f.n {
		if f.state[i] == stateKeyed {
			start[f.key[i]+1]++
		}
	}
	for k := range cited {
		start[k+1] += start[k]
	}
	byKey := make([]int32, start[cited])
	fill := slices.Clone(start[:cited])
	for i := range f.n {
		if f.state[i] == stateKeyed {
			k := f.key[i]
			byKey[fill[k]] = int32(i)
			fill[k]++
		}
	}

	// Same-host redirects join the source's key with the target's, unless
	// the target is shared by too many keys to mean anything. Targets are
	// normalized on every core.
	targets := make([]string, len(f.redirURL))
	parallel(len(f.redirURL), func(_, lo, hi int) {
		for j := lo; j < hi; j++ {
			targets[j] = g.keyOf(f.redirURL[j])
		}
	})
	indexed.Wait()
	// (target, source) pairs, without repeats: a login page may be the
	// target of a hundred thousand keys.
	var pairs [][2]int32
	for i := range f.n {
		if f.state[i] != stateKeyed {
			continue
		}
		for _, t := range targets[f.redirOff[i]:f.redirOff[i+1]] {
			if t == "" {
				continue
			}
			if tref := g.ref(t); tref != f.key[i] {
				pairs = append(pairs, [2]int32{tref, f.key[i]})
			}
		}
	}
	sortParallel(pairs, func(a, b [2]int32) int { return cmp.Or(int(a[0]-b[0]), int(a[1]-b[1])) })
	pairs = slices.Compact(pairs)
	srcs := map[int32][]int32{} // target ref -> source key refs
	for _, p := range pairs {
		srcs[p[0]] = append(srcs[p[0]], p[1])
	}
	parent := make([]int32, len(g.keys))
	for k := range parent {
		parent[k] = int32(k)
	}
	find := func(k int32) int32 {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	joined := make([]bool, len(g.keys))
	inUnion := make([]bool, len(g.keys)) // cited, or a joined target
	for k := range cited {
		inUnion[k] = true
	}
	g.sources = make(map[int32]int, len(srcs))
	for t, src := range srcs {
		n := len(src)
		if f.sourceCount != nil {
			if m, ok := f.sourceCount(g.keys[t]); ok {
				n = m
			}
		}
		g.sources[t] = n
		if n > g.maxShared {
			continue
		}
		inUnion[t] = true
		for _, s := range src {
			a, b := find(s), find(t)
			if a != b {
				parent[max(a, b)] = min(a, b)
			}
			joined[s], joined[t] = true, true
		}
	}

	// The groups: one per root of a cited key.
	g.groupOfKey = make([]int32, len(g.keys))
	groupOfRoot := make([]int32, len(g.keys))
	for k := range groupOfRoot {
		groupOfRoot[k], g.groupOfKey[k] = -1, -1
	}
	for k := range int32(cited) {
		r := find(k)
		gi := groupOfRoot[r]
		if gi < 0 {
			gi = int32(len(g.groups))
			groupOfRoot[r] = gi
			g.groups = append(g.groups, &group{})
		}
		gr := g.groups[gi]
		gr.keys = append(gr.keys, k)
		gr.members = append(gr.members, byKey[start[k]:start[k+1]]...)
		gr.redirect = gr.redirect || joined[k]
	}
	for k := range g.keys {
		if inUnion[k] {
			g.groupOfKey[k] = groupOfRoot[find(int32(k))]
		}
	}
	// Every key's rank in key text order, sorted once on every core.
	type keyText struct {
		text string
		ref  int32
	}
	byText := make([]keyText, len(g.keys))
	for ref, k := range g.keys {
		byText[ref] = keyText{k, int32(ref)}
	}
	sortByText(byText, func(k keyText) string { return k.text })
	rank := make([]int32, len(g.keys))
	for i, k := range byText {
		rank[k.ref] = int32(i)
	}
	byText = nil
	parallel(len(g.groups), func(_, lo, hi int) {
		for _, gr := range g.groups[lo:hi] {
			slices.SortFunc(gr.keys, func(a, b int32) int { return int(rank[a] - rank[b]) })
			gr.id = groupID(g.keys[gr.keys[0]])
			if len(gr.keys) > 1 {
				slices.Sort(gr.members)
			}
			for _, m := range gr.members {
				gr.hashes = append(gr.hashes, f.hashRef[f.hashOff[m]:f.hashOff[m+1]]...)
				gr.related = gr.related || f.related[m]
				for _, it := range f.ev[f.evOff[m]:f.evOff[m+1]] {
					if it.digest >= 0 {
						gr.digests = append(gr.digests, it.digest)
					}
					if it.hasSim {
						gr.sims = append(gr.sims, it.sim)
					}
				}
			}
			slices.Sort(gr.hashes)
			gr.hashes = slices.Compact(gr.hashes)
			slices.Sort(gr.digests)
			gr.digests = slices.Compact(gr.digests)
			slices.Sort(gr.sims)
			gr.sims = slices.Compact(gr.sims)
		}
	})
	// Groups in the order of their smallest keys: each key is the smallest
	// of at most one group, so placing each group at its key's rank sorts
	// them. Group numbers change: keep the key -> group map right.
	sorted := make([]*group, 0, len(g.groups))
	byRank := make([]*group, len(g.keys))
	for i, gr := range g.groups {
		gr.num = int32(i)
		byRank[rank[gr.keys[0]]] = gr
	}
	for _, gr := range byRank {
		if gr != nil {
			sorted = append(sorted, gr)
		}
	}
	g.groups = sorted
	renumber := make([]int32, len(g.groups))
	for i, gr := range g.groups {
		renumber[gr.num] = int32(i)
		gr.idx = int32(i)
	}
	for k, gi := range g.groupOfKey {
		if gi >= 0 {
			g.groupOfKey[k] = renumber[gi]
		}
	}

	// Content hashes: shared by too many groups, a hash is a common page
	// (an error or login page) and is evidence of nothing.
	// How many groups have each hash: the groups' hashes sorted, then
	// counted by distinct hash. Hash refs are a backend's handles (term ids
	// in citestore), so an array indexed by ref was 4 bytes for every term
	// of the database (30 MB at a million citations), where this is 8
	// bytes for each group's hash.
	var all []int32
	for _, gr := range g.groups {
		all = append(all, gr.hashes...)
	}
	sortParallel(all, cmp.Compare[int32])
	var hashes, counts []int32 // distinct hash refs, in order, and how many groups have each
	for i, h := range all {
		if i == 0 || h != all[i-1] {
			hashes, counts = append(hashes, h), append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	all = nil
	count := func(h int32) int32 {
		i, _ := slices.BinarySearch(hashes, h)
		return counts[i]
	}
	g.hashGroups, g.sharedText = map[int32][]int32{}, map[string]int{}
	for gi, gr := range g.groups {
		for _, h := range gr.hashes {
			if n := count(h); n > 1 {
				g.hashGroups[h] = append(g.hashGroups[h], int32(gi))
				g.sharedText[f.hashText(h)] = int(n)
			}
		}
	}
	// Text digests and SimHashes, counted the same way.
	digestCount := map[int32][]int32{}
	g.simGroups = map[uint64][]int32{}
	for gi, gr := range g.groups {
		for _, d := range gr.digests {
			digestCount[d] = append(digestCount[d], int32(gi))
		}
		for _, v := range gr.sims {
			g.simGroups[v] = append(g.simGroups[v], int32(gi))
		}
	}
	g.digestGroups = map[int32][]int32{}
	for d, gs := range digestCount {
		if len(gs) > 1 {
			g.digestGroups[d] = gs
		}
	}
	parallel(len(g.groups), func(_, lo, hi int) {
		for _, gr := range g.groups[lo:hi] {
			gr.verdict, gr.confirmedBy, gr.why = g.judge(gr)
		}
	})
	g.findSameText()
	return g
}

// workers is how many workers review and run use.
func (g *grouping) workers() int {
	if g.nw > 0 {
		return g.nw
	}
	return workers()
}

// ref returns the ref of key text k, numbering it if it is new.
func (g *grouping) ref(k string) int32 {
	if r, ok := g.keyIndex[k]; ok {
		return r
	}
	r := int32(len(g.keys))
	g.keys = append(g.keys, k)
	g.keyIndex[k] = r
	return r
}

// shared says how many groups have content hash h; only called for hashes
// of some group.
func (g *grouping) shared(h string) int {
	if n, ok := g.sharedText[h]; ok {
		return n
	}
	return 1
}

// lists reports whether the options list gr, the i-th group.
func (g *grouping) lists(i int, gr *group) bool {
	if g.opts.Verdict != "" && gr.verdict != g.opts.Verdict {
		return false
	}
	return len(gr.members) >= g.opts.MinSize || (g.reviewed != nil && g.reviewed[i])
}

// review finds, for GroupOptions.Review, the groups that take part in a
// relation that needs review, as its source or its target, and counts
// every group's relations by type on the way. Only the groups the integer
// facts say have relations are built (gr.related: a member's redirect,
// canonical declaration or declared relation; or a content hash shared
// with a few groups), and only their members with such facts, as run
// builds the groups it does not list; run then builds only the listed
// groups. A cancelled context stops it with its error, and nothing is
// kept.
func (g *grouping) review(ctx context.Context) error {
	nw := g.workers()
	marks := make([][]int32, nw)
	counts := make([]map[string]int, nw)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range nw {
		counts[w] = map[string]int{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				t := int(next.Add(1) - 1)
				if t*groupsPerTask >= len(g.groups) || ctx.Err() != nil {
					return
				}
				for i := t * groupsPerTask; i < min((t+1)*groupsPerTask, len(g.groups)); i++ {
					gr := g.groups[i]
					if !gr.related && !g.sharesContent(gr) || g.reviewOnly != nil && !g.reviewOnly[int32(i)] {
						continue
					}
					counted := g.emit == nil || g.emit[int32(i)]
					for _, r := range g.build(w, gr, false).Relations {
						if counted {
							counts[w][r.Type]++
						}
						if r.Review {
							marks[w] = append(marks[w], int32(i))
							if r.to >= 0 {
								marks[w] = append(marks[w], r.to)
							}
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	g.reviewed = make([]bool, len(g.groups))
	g.relationCounts = map[string]int{}
	for w := range nw {
		for _, i := range marks[w] {
			g.reviewed[i] = true
		}
		for t, n := range counts[w] {
			g.relationCounts[t] += n
		}
	}
	return nil
}

// build makes the Group of gr: members (with reasons) and relations when
// listed, and only the relations otherwise. w is the calling worker.
func (g *grouping) build(w int, gr *group, listed bool) *Group {
	out := &Group{ID: gr.id, Key: g.keys[gr.keys[0]], Verdict: gr.verdict, ConfirmedBy: gr.confirmedBy}
	if len(gr.keys) > 1 {
		out.Keys = make([]string, len(gr.keys))
		for i, k := range gr.keys {
			out.Keys[i] = g.keys[k]
		}
	}
	// A group that is not listed is built for its relations only (they
	// are counted): of its members, those that have any.
	nums := gr.members
	if !listed {
		nums = nil
		for _, m := range gr.members {
			if g.f.related[m] {
				nums = append(nums, m)
			}
		}
	}
	// One allocation each for the group's citations and members.
	cits := make([]Citation, len(nums))
	members := make([]Member, len(nums))
	out.Members = make([]*Member, len(nums))
	g.f.fill(nums, cits)
	for i := range nums {
		c := &cits[i]
		members[i] = Member{citation: c, CitationID: c.ID, RawURL: c.Raw, Fragment: c.Fragment, Key: c.Norm.Key, ResolvedURL: resolved(c), Passage: passage(c)}
		out.Members[i] = &members[i]
	}
	if listed {
		r := &reasoner{g: out, shared: g.shared, maxShared: g.maxShared}
		for _, m := range out.Members {
			m.Reasons = r.reasons(m.citation)
			if gr.why != "" {
				m.Reasons = append(m.Reasons, gr.why)
			}
		}
	}
	if gr.related {
		relations(out, g.keyOf, func(k string) (string, int32, bool) { return g.target(gr, k) }, g.redirectSources, g.maxShared)
	}
	for _, h := range gr.hashes {
		gs := g.hashGroups[h]
		if len(gs) < 2 || len(gs) > g.maxShared {
			continue
		}
		for _, o := range gs {
			if other := g.groups[o]; other != gr {
				out.Relations = append(out.Relations, &GroupRelation{Type: RelSameContent, From: gr.id, To: other.id, Evidence: "the same content hash " + g.f.hashText(h) + " under different keys", Review: true, to: o})
			}
		}
	}
	for _, d := range gr.digests {
		gs := g.digestGroups[d]
		if len(gs) < 2 || len(gs) > g.maxShared {
			continue
		}
		for _, o := range gs {
			if o != gr.idx && !g.sharesHash(gr, o) {
				out.Relations = append(out.Relations, &GroupRelation{Type: model.RelSameText, From: gr.id, To: g.groups[o].id, Evidence: "the same main text (text digest " + g.f.digestText(d) + ") under different keys", Review: true, to: o})
			}
		}
	}
	for _, l := range g.textLinks[gr.idx] {
		if l.digest == "" {
			out.Relations = append(out.Relations, &GroupRelation{Type: model.RelSameText, From: gr.id, To: g.groups[l.to].id, Evidence: fmt.Sprintf("near-identical main text (SimHash distance %d) under different keys", l.dist), Review: true, to: l.to})
		}
	}
	if out.Relations == nil {
		out.Relations = []*GroupRelation{}
	}
	// The same relation (type, target, evidence) is listed once.
	slices.SortFunc(out.Relations, cmpRelation)
	out.Relations = slices.CompactFunc(out.Relations, func(a, b *GroupRelation) bool { return cmpRelation(a, b) == 0 })
	return out
}

// target returns the id and number of the group of key text k ("" and -1
// when no group has it), and whether that group is from.
func (g *grouping) target(from *group, k string) (id string, num int32, self bool) {
	ref, ok := g.keyIndex[k]
	if !ok || g.groupOfKey[ref] < 0 {
		return "", -1, false
	}
	num = g.groupOfKey[ref]
	to := g.groups[num]
	return to.id, num, to == from
}

// redirectSources says how many keys redirect to key text t.
func (g *grouping) redirectSources(t string) int {
	ref, ok := g.keyIndex[t]
	if !ok {
		return 0
	}
	return g.sources[ref]
}

// run builds the groups in order, on every core, a batch at a time. With
// encode nil, the listed groups are collected into the report. Otherwise
// encode turns each listed group into bytes on the worker that built it
// (so groups are dropped as soon as they are written), and write gets
// the bytes of every batch in group order, on the calling goroutine; the
// report then has no groups.
func (g *grouping) run(ctx context.Context, encode func(buf []byte, gr *Group) []byte, write func([]byte) error) (*Report, error) {
	f := g.f
	rep := &Report{Policy: g.policy, Groups: []*Group{}, Rejected: []RejectedURL{}, Missing: []string{}, IncompleteRuns: g.incomplete, Warnings: g.warnings}
	for i := range f.n {
		switch f.state[i] {
		case stateUnnormalized:
			var c [1]Citation
			f.fill([]int32{int32(i)}, c[:])
			rep.Missing = append(rep.Missing, c[0].ID)
		case stateRejected:
			var c [1]Citation
			f.fill([]int32{int32(i)}, c[:])
			rep.Rejected = append(rep.Rejected, RejectedURL{CitationID: c[0].ID, RawURL: c[0].Raw, Code: c[0].Norm.ErrorCode, Message: c[0].Norm.ErrorMessage})
		}
	}
	counts := map[string]int{
		"citations":    f.n,
		"rejected":     len(rep.Rejected),
		"unnormalized": len(rep.Missing),
		"groups":       len(g.groups),
	}
	if g.emit != nil {
		counts["groups"] = len(g.emit)
	}
	// The groups are cut into tasks of a few hundred, which the workers
	// take in order as they become free (a big group does not hold up the
	// others); this goroutine merges and writes the results in task order
	// while the workers go on. At most window tasks are taken and not yet
	// written, which bounds the memory the output takes.
	if g.opts.Review && g.opts.MinSize > 1 && g.reviewed == nil {
		if err := g.review(ctx); err != nil {
			return nil, err
		}
	}
	counted := g.relationCounts != nil
	per := groupsPerTask
	type result struct {
		listed    []*Group
		buf       []byte
		several   int
		verdicts  map[string]int
		relations map[string]int
	}
	nw := g.workers()
	ntasks := (len(g.groups) + per - 1) / per
	window := 4 * nw
	slots := make([]chan result, window) // task t's result is sent on slots[t%window]
	tokens := make(chan struct{}, window)
	for i := range window {
		slots[i] = make(chan result, 1)
		tokens <- struct{}{}
	}
	done := make(chan struct{})
	free := make(chan []byte, window) // written buffers, for reuse
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range nw {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-tokens:
				case <-done:
					return
				}
				t := int(next.Add(1) - 1)
				if t >= ntasks {
					return
				}
				res := result{verdicts: map[string]int{}, relations: map[string]int{}}
				if encode != nil {
					select {
					case res.buf = <-free:
					default:
					}
				}
				for i := t * per; i < min((t+1)*per, len(g.groups)); i++ {
					gr := g.groups[i]
					if g.emit != nil && !g.emit[int32(i)] {
						continue
					}
					listed := g.lists(i, gr)
					if len(gr.members) > 1 {
						res.several++
					}
					res.verdicts[gr.verdict]++
					// Relations are counted here unless review counted them.
					if !listed && (counted || !gr.related && !g.sharesContent(gr)) {
						continue
					}
					out := g.build(w, gr, listed)
					if !counted {
						for _, r := range out.Relations {
							res.relations[r.Type]++
						}
					}
					switch {
					case !listed:
					case encode != nil:
						res.buf = encode(res.buf, out)
					default:
						res.listed = append(res.listed, out)
					}
				}
				slots[t%window] <- res
			}
		}()
	}
	stop := func() {
		close(done)
		wg.Wait()
	}
	for t := range ntasks {
		if err := ctx.Err(); err != nil {
			stop()
			return nil, err
		}
		res := <-slots[t%window]
		if res.several > 0 {
			counts["groups_with_several_members"] += res.several
		}
		for v, n := range res.verdicts {
			counts["verdict:"+v] += n
		}
		for r, n := range res.relations {
			counts["relation:"+r] += n
		}
		rep.Groups = append(rep.Groups, res.listed...)
		if encode != nil && len(res.buf) > 0 {
			if err := write(res.buf); err != nil {
				stop()
				return nil, err
			}
			select {
			case free <- res.buf[:0]:
			default:
			}
		}
		tokens <- struct{}{}
	}
	stop()
	for r, n := range g.relationCounts {
		counts["relation:"+r] += n
	}
	rep.Counts = counts
	return rep, nil
}

// groupsPerTask is how many groups a task of run holds: enough that a
// task is worth handing out, few enough that the cores stay busy to the
// end. Tests lower it to make many tasks of a small database.
var groupsPerTask = 256

// sharesContent reports whether gr has a content hash it shares with other
// groups, but not with so many that it means nothing.
func (g *grouping) sharesContent(gr *group) bool {
	for _, h := range gr.hashes {
		if n := len(g.hashGroups[h]); n >= 2 && n <= g.maxShared {
			return true
		}
	}
	return len(g.textLinks[gr.idx]) > 0
}

// sharesHash reports whether gr and group o share a content hash that is
// evidence (a same-content-hash relation).
func (g *grouping) sharesHash(gr *group, o int32) bool {
	for _, h := range gr.hashes {
		if gs := g.hashGroups[h]; len(gs) >= 2 && len(gs) <= g.maxShared && slices.Contains(gs, o) {
			return true
		}
	}
	return false
}

// GroupSet is the review groups of a database under one policy, found and
// ready to be written. LoadGroups reads only what grouping needs, and the
// members of a group are built only while it is written: this is how
// `provgraph groups` goes through a million citations in seconds.
type GroupSet struct {
	g *grouping
	v *viewGroups // set instead of g when read from a grouping view
}

// LoadGroups finds the review groups of src under policy (as for Load):
// one lean scan (rowFacts) finds the groups, and the members a group
// lists are built from that scan's arrays (store.Texts.Citations) while
// it is written. It reads; it never writes.
func LoadGroups(ctx context.Context, src Source, policy string, opts GroupOptions) (*GroupSet, error) {
	snap, err := choose(ctx, src, policy)
	if err != nil {
		return nil, err
	}
	fields := store.FieldCitation
	if opts.Detail {
		fields |= store.FieldDetail
	}
	f, err := rowFacts(ctx, src, snap.Policy.Digest, fields)
	if err != nil {
		return nil, err
	}
	return &GroupSet{g: newGrouping(f, snap, opts)}, nil
}

// Policy is the policy whose keys the groups are made of.
func (s *GroupSet) Policy() PolicyRef {
	if s.v != nil {
		return s.v.snap.Policy
	}
	return s.g.policy
}

// Warnings are the report's warnings, known before any group is written.
func (s *GroupSet) Warnings() []string {
	if s.v != nil {
		return runWarnings(incompleteRuns(s.v.snap.Runs))
	}
	return s.g.warnings
}

// FromView says the set is written from a grouping view, a batch of keys
// at a time (LoadGroupsFromView).
func (s *GroupSet) FromView() bool { return s.v != nil }

// FromRecords says the set is written from a grouping view whose rows
// carry member records (ViewRow.Member): no citation is read for it.
func (s *GroupSet) FromRecords() bool { return s.v != nil && s.v.records }

// Write builds the listed groups in order, a batch at a time on every
// core. encode appends one group's bytes to buf (it runs on several
// goroutines at once); write gets the bytes of each batch, in order, on the
// calling goroutine, and must not keep them (the buffer is reused). The report returned has the rejected and unnormalized
// citations and the counts, and no groups: they were written.
func (s *GroupSet) Write(ctx context.Context, encode func(buf []byte, g *Group) []byte, write func([]byte) error) (*Report, error) {
	if s.v != nil {
		return s.v.write(ctx, encode, write)
	}
	s.g.f.dropFound()
	return s.g.run(ctx, encode, write)
}

// dropFound lets go of the facts that only finding and judging the groups
// read (newGrouping, judge, findSameText): keys, redirects and content
// evidence by citation. Writing reads the states, the related flags and
// the texts: at ten million citations the rest is about 260 MB that the
// heap would otherwise hold, and grow from, while the groups are written.
func (f *facts) dropFound() {
	f.key, f.content, f.hashOff, f.hashRef, f.redirOff, f.redirURL, f.evOff, f.ev = nil, nil, nil, nil, nil, nil, nil, nil
}

// Report returns the whole report, the listed groups included.
func (s *GroupSet) Report(ctx context.Context) (*Report, error) {
	if s.v != nil {
		return s.v.write(ctx, nil, nil)
	}
	return s.g.run(ctx, nil, nil)
}
