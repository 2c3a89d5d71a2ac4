package query

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/model"
)

// This file gives a group its verdict from its members' content evidence
// and finds the groups whose main texts are the same or near-identical
// (same-text relations). Only successful retrievals count (a 2xx final
// response whose extraction found no soft error: Retrieval.Successful),
// and a hash, digest or SimHash that more than maxShared groups have is a
// common page and counts for nothing.

// Confirmations: which evidence confirmed an identity-confirmed group, as
// stats counts them (Group.ConfirmedBy).
const (
	ConfirmedByContentHash = "content-hash" // byte hashes agree
	ConfirmedByTextDigest  = "text-digest"  // main texts equal after normalization
	ConfirmedByNearText    = "near-text"    // SimHashes within extract.NearThreshold
)

// judge returns gr's verdict, which evidence confirmed it (a Confirmed
// constant, or "") and the line of the members' reasons that says why.
//
// A conflict is two successful retrievals whose main texts are farther
// apart than extract.NearThreshold. Identity is confirmed when every
// member has a successful retrieval, at least two distinct retrievals are
// among them, and the members are linked into one by equal content hashes,
// then equal text digests, then SimHashes within the threshold: the
// weakest kind of link that was needed is the one reported.
func (g *grouping) judge(gr *group) (verdict, by, why string) {
	f := g.f
	fallback := model.VerdictNormalizedCompare
	for _, m := range gr.members {
		if f.content[m] {
			fallback = model.VerdictNeedsContentCheck
		}
	}
	if gr.redirect {
		fallback = model.VerdictNeedsContentCheck
	}
	hashOK := func(h int32) bool { return h >= 0 && len(g.hashGroups[h]) <= g.maxShared }
	digestOK := func(d int32) bool { return d >= 0 && len(g.digestGroups[d]) <= g.maxShared }
	simOK := func(it *evItem) bool { return it.hasSim && len(g.simGroups[it.sim]) <= g.maxShared }
	items := 0
	for _, m := range gr.members {
		items += int(f.evOff[m+1] - f.evOff[m])
	}
	if items == 0 {
		return fallback, "", ""
	}
	// Conflict: the farthest two main texts.
	var sims []uint64
	for _, m := range gr.members {
		for i := range f.ev[f.evOff[m]:f.evOff[m+1]] {
			if it := &f.ev[f.evOff[m]+int32(i)]; simOK(it) {
				sims = append(sims, it.sim)
			}
		}
	}
	slices.Sort(sims)
	sims = slices.Compact(sims)
	worst := -1
	for i := range sims {
		for _, b := range sims[i+1:] {
			if d := extract.Distance(sims[i], b); d > extract.NearThreshold && d > worst {
				worst = d
			}
		}
	}
	if worst >= 0 {
		return model.VerdictConflict, "", fmt.Sprintf("main texts of successful retrievals differ (SimHash distance %d, beyond %d)", worst, extract.NearThreshold)
	}
	if len(gr.members) < 2 {
		return fallback, "", ""
	}
	// Slices sorted, not maps: most groups are small, and judge runs for
	// every group of the database.
	var rets []int32
	for _, m := range gr.members {
		usable := false
		for _, it := range f.ev[f.evOff[m]:f.evOff[m+1]] {
			if hashOK(it.hash) || digestOK(it.digest) || simOK(&it) {
				usable = true
				rets = append(rets, it.ret)
			}
		}
		if !usable {
			return fallback, "", ""
		}
	}
	slices.Sort(rets)
	if len(slices.Compact(rets)) < 2 {
		return fallback, "", ""
	}
	// Link the members (union-find over their positions in gr.members).
	parent := make([]int, len(gr.members))
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	parts := len(parent)
	union := func(a, b int) bool {
		a, b = find(a), find(b)
		if a == b {
			return false
		}
		parent[max(a, b)] = min(a, b)
		parts--
		return true
	}
	type valueOf struct {
		v uint64
		i int
	}
	var vals []valueOf // scratch
	// link joins the members that share a value.
	link := func(value func(it *evItem) (uint64, bool)) {
		vals = vals[:0]
		for i, m := range gr.members {
			for j := f.evOff[m]; j < f.evOff[m+1]; j++ {
				if v, ok := value(&f.ev[j]); ok {
					vals = append(vals, valueOf{v, i})
				}
			}
		}
		slices.SortFunc(vals, func(a, b valueOf) int { return cmp.Compare(a.v, b.v) })
		for k := 1; k < len(vals); k++ {
			if vals[k].v == vals[k-1].v {
				union(vals[k-1].i, vals[k].i)
			}
		}
	}
	link(func(it *evItem) (uint64, bool) { return uint64(it.hash), hashOK(it.hash) })
	if parts == 1 {
		return model.VerdictIdentityConfirmed, ConfirmedByContentHash, "identity confirmed: content hash equal"
	}
	link(func(it *evItem) (uint64, bool) { return uint64(it.digest), digestOK(it.digest) })
	if parts == 1 {
		return model.VerdictIdentityConfirmed, ConfirmedByTextDigest, "identity confirmed: text digest equal"
	}
	// SimHashes: members of one value, then values within the threshold.
	link(func(it *evItem) (uint64, bool) { return it.sim, simOK(it) })
	memberOf := func(sim uint64) int { // a member with SimHash sim (vals is sorted by it)
		k, _ := slices.BinarySearchFunc(vals, sim, func(a valueOf, v uint64) int { return cmp.Compare(a.v, v) })
		return vals[k].i
	}
	far := 0
	for i := range sims {
		for _, b := range sims[i+1:] {
			if d := extract.Distance(sims[i], b); d <= extract.NearThreshold && union(memberOf(sims[i]), memberOf(b)) {
				far = max(far, d)
			}
		}
	}
	if parts == 1 {
		return model.VerdictIdentityConfirmed, ConfirmedByNearText, fmt.Sprintf("identity confirmed: near-identical text (SimHash distance %d)", far)
	}
	return fallback, "", ""
}

// textLink is a same-text relation from a group to group to, by SimHashes
// dist apart (digest: by equal text digests).
type textLink struct {
	to     int32
	dist   int
	digest string
}

// findSameText finds, for every group, the other groups whose successful
// retrievals have the same main text (an equal text digest) or a
// near-identical one (SimHashes within extract.NearThreshold), unless they
// share a content hash already (a same-content-hash relation) or the value
// is common (more than maxShared groups). Near pairs are found as Manku,
// Jain and Das Sarma do: two 64-bit hashes within 3 bits agree on one of
// four 16-bit blocks, so only hashes that share a block are compared.
func (g *grouping) findSameText() {
	g.textLinks = map[int32][]textLink{}
	if len(g.simGroups) == 0 && len(g.digestGroups) == 0 {
		return
	}
	sharesHash := func(a, b int32) bool {
		for _, h := range g.groups[a].hashes {
			if n := len(g.hashGroups[h]); n >= 2 && n <= g.maxShared && slices.Contains(g.hashGroups[h], b) {
				return true
			}
		}
		return false
	}
	type pair struct{ a, b int32 }
	best := map[pair]textLink{}
	add := func(a, b int32, l textLink) {
		if a == b || sharesHash(a, b) {
			return
		}
		for _, p := range []pair{{a, b}, {b, a}} {
			old, ok := best[p]
			switch {
			case !ok, l.digest != "" && old.digest == "", l.digest == old.digest && l.dist < old.dist:
				l.to = p.b
				best[p] = l
			}
		}
	}
	for d, gs := range g.digestGroups {
		if len(gs) > g.maxShared {
			continue
		}
		for i, a := range gs {
			for _, b := range gs[i+1:] {
				add(a, b, textLink{digest: g.f.digestText(d)})
			}
		}
	}
	var values []uint64
	for v, gs := range g.simGroups {
		if len(gs) <= g.maxShared {
			values = append(values, v)
		}
	}
	slices.Sort(values)
	near := func(u, v uint64, d int) {
		for _, a := range g.simGroups[u] {
			for _, b := range g.simGroups[v] {
				add(a, b, textLink{dist: d})
			}
		}
	}
	for _, v := range values {
		near(v, v, 0)
	}
	seen := map[[2]uint64]bool{}
	for block := range 4 {
		shift := 16 * block
		buckets := map[uint64][]uint64{}
		for _, v := range values {
			k := v >> shift & 0xffff
			buckets[k] = append(buckets[k], v)
		}
		for _, vs := range buckets {
			for i, u := range vs {
				for _, v := range vs[i+1:] {
					if d := extract.Distance(u, v); d <= extract.NearThreshold && !seen[[2]uint64{u, v}] {
						seen[[2]uint64{u, v}] = true
						near(u, v, d)
					}
				}
			}
		}
	}
	for p, l := range best {
		g.textLinks[p.a] = append(g.textLinks[p.a], l)
	}
}
