package query

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/normalize"
)

// Verdicts of a review group, after the codebook of the seed documents. A
// verdict says how strong the reason to review the members together is; it
// is never a claim that they are the same resource.
const (
	// VerdictIdentityConfirmed: every member has a content hash and they
	// all agree.
	VerdictIdentityConfirmed = "identity-confirmed"
	// VerdictNormalizedCompare: the keys are equal by syntax-level rules and
	// tracking-parameter removal only.
	VerdictNormalizedCompare = "normalized-compare"
	// VerdictNeedsContentCheck: equality relied on a server-defined host
	// rule or on a redirect, and no content hash confirms it.
	VerdictNeedsContentCheck = "needs-content-check"
	// VerdictConflict: members' content hashes disagree.
	VerdictConflict = "conflict"
)

// Relation types between groups. None of them joins groups.
const (
	RelCrossHostRedirect = "cross-host-redirect"
	RelCanonical         = "canonical"
	RelSameContent       = "same-content-hash"
	RelSharedRedirect    = "shared-redirect-target"
)

// DefaultMaxShared is how many distinct groups may share a redirect
// target or a content hash before it stops counting as duplicate
// evidence: a login wall, a home page or a soft-404 page is the same target
// for many unrelated sources.
const DefaultMaxShared = 3

// GroupOptions configures Groups. The zero value means the defaults and
// every group listed.
type GroupOptions struct {
	MaxShared int // see DefaultMaxShared
	// MinSize and Verdict select the groups the report lists: those with at
	// least MinSize members and, when Verdict is set, that verdict. The
	// counts always cover every group, and relations may point to groups
	// not listed.
	MinSize int
	Verdict string
}

// lists reports whether a group is listed under the options.
func (o GroupOptions) lists(g *Group) bool {
	return len(g.Members) >= o.MinSize && (o.Verdict == "" || g.Verdict == o.Verdict)
}

// Report is the result of Groups.
type Report struct {
	Policy   PolicyRef      `json:"policy"`
	Groups   []*Group       `json:"groups"`
	Rejected []RejectedURL  `json:"rejected"`
	Missing  []string       `json:"unnormalized"` // citation ids with no normalization under the policy
	Counts   map[string]int `json:"counts"`
	Warnings []string       `json:"warnings,omitempty"`
}

// Group is a set of citations that are probably the same resource, with
// the reason for each member and the relations to other groups.
type Group struct {
	ID        string           `json:"id"`
	Key       string           `json:"key"`
	Keys      []string         `json:"keys,omitempty"` // every key in the group when a redirect joined several
	Verdict   string           `json:"verdict"`
	Members   []*Member        `json:"members"`
	Relations []*GroupRelation `json:"relations"`
	redirect  bool
	listed    bool
	hashes    []string // the distinct content hashes of the members
}

// Member is one citation in a group. Every value is the member's own.
type Member struct {
	CitationID  string   `json:"citation_id"`
	RawURL      string   `json:"raw_url"`
	Fragment    *string  `json:"fragment"`
	ResolvedURL string   `json:"resolved_url,omitempty"`
	Key         string   `json:"key"`
	Reasons     []string `json:"reasons"`
	citation    *Citation
}

// GroupRelation relates a group to another group (To) or to a URL no
// citation has (ToURL). Review is set for the relations a person must look
// at: those that cross hosts.
type GroupRelation struct {
	Type     string `json:"type"`
	From     string `json:"from"`
	To       string `json:"to,omitempty"`
	ToURL    string `json:"to_url,omitempty"`
	Evidence string `json:"evidence"`
	Review   bool   `json:"review"`
}

// RejectedURL is a citation whose raw URL the policy rejected. It is never
// grouped.
type RejectedURL struct {
	CitationID string `json:"citation_id"`
	RawURL     string `json:"raw_url"`
	Code       string `json:"code"`
	Message    string `json:"message"`
}

// Groups derives the review groups of a snapshot. It reads the snapshot
// only: no node, literal or edge is created or changed.
//
// The work per group (ordering members, verdicts, reasons, relations) runs
// on every core; reasons are written only for the groups the report lists.
func Groups(snap *Snapshot, opts GroupOptions) *Report {
	maxShared := opts.MaxShared
	if maxShared <= 0 {
		maxShared = DefaultMaxShared
	}
	rep := &Report{Policy: snap.Policy, Groups: []*Group{}, Rejected: []RejectedURL{}, Missing: []string{}, Counts: map[string]int{}}
	norm, err := snap.Normalizer()
	if err != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("%v: redirect, canonical and relation targets are matched by exact key text only", err))
	} else if snap.EngineChanged() {
		rep.Warnings = append(rep.Warnings, "this provgraph's normalization engine differs from the one the keys were made with: targets are normalized with the current one")
	}
	// keyOf gives the key of a URL that may not be cited. The normalizer
	// is safe for concurrent use.
	keyOf := func(u string) string {
		if norm == nil {
			return u
		}
		res, err := norm.Normalize(u)
		if err != nil {
			return ""
		}
		return res.Key
	}

	// Citations by key; rejected and unnormalized ones aside.
	byKey := make(map[string][]*Citation, len(snap.Citations)/2)
	for _, c := range snap.Citations {
		switch {
		case c.Norm == nil:
			rep.Missing = append(rep.Missing, c.ID)
		case c.Norm.Rejected():
			rep.Rejected = append(rep.Rejected, RejectedURL{CitationID: c.ID, RawURL: c.Raw, Code: c.Norm.ErrorCode, Message: c.Norm.ErrorMessage})
		default:
			byKey[c.Norm.Key] = append(byKey[c.Norm.Key], c)
		}
	}
	uf := newUnionFind()
	for k := range byKey {
		uf.add(k)
	}

	// Same-host redirects join the source's key with the target's, unless
	// the target is shared by too many keys to mean anything.
	sources := map[string]map[string]bool{} // target key -> source keys
	for _, c := range snap.Citations {
		if c.Norm == nil || c.Norm.Rejected() {
			continue
		}
		for _, r := range c.Retrievals {
			if len(r.Hops) == 0 || r.FinalURL == "" || r.CrossesHost() {
				continue
			}
			t := keyOf(r.FinalURL)
			if t == "" || t == c.Norm.Key {
				continue
			}
			if sources[t] == nil {
				sources[t] = map[string]bool{}
			}
			sources[t][c.Norm.Key] = true
		}
	}
	joined := map[string]bool{} // keys joined by a redirect
	for t, src := range sources {
		if len(src) > maxShared {
			continue
		}
		uf.add(t)
		for s := range src {
			uf.union(s, t)
			joined[s], joined[t] = true, true
		}
	}

	// Build the groups. The members of all groups are one allocation.
	groupOf := make(map[string]*Group, len(byKey)) // root key -> group
	members := make([]Member, 0, len(snap.Citations)-len(rep.Missing)-len(rep.Rejected))
	for k, cs := range byKey {
		root := uf.find(k)
		g := groupOf[root]
		if g == nil {
			g = &Group{}
			groupOf[root] = g
		}
		g.Keys = append(g.Keys, k)
		for _, c := range cs {
			members = append(members, Member{citation: c, CitationID: c.ID, RawURL: c.Raw, Fragment: c.Fragment, Key: k, ResolvedURL: resolved(c)})
			g.Members = append(g.Members, &members[len(members)-1])
		}
		if joined[k] {
			g.redirect = true
		}
	}
	// The group of every key, cited or a joined redirect target, fixed
	// now so that the work below only reads it.
	groupByKey := make(map[string]*Group, len(uf.parent))
	for k := range uf.parent {
		groupByKey[k] = groupOf[uf.find(k)]
	}
	all := make([]*Group, 0, len(groupOf))
	for _, g := range groupOf {
		all = append(all, g)
	}
	parallel(len(all), func(_, lo, hi int) {
		for _, g := range all[lo:hi] {
			slices.Sort(g.Keys)
			g.Key = g.Keys[0]
			if len(g.Keys) == 1 {
				g.Keys = nil
			}
			g.ID = groupID(snap.Policy.Digest, g.Key)
			slices.SortFunc(g.Members, func(a, b *Member) int { return strings.Compare(a.CitationID, b.CitationID) })
			for _, m := range g.Members {
				for _, r := range m.citation.Retrievals {
					if r.ContentHash != "" && !slices.Contains(g.hashes, r.ContentHash) {
						g.hashes = append(g.hashes, r.ContentHash)
					}
				}
			}
		}
	})
	sortParallel(all, func(a, b *Group) int { return strings.Compare(a.Key, b.Key) })

	// Content hashes: shared by too many groups, a hash is a common page
	// (an error or login page) and is evidence of nothing.
	hashGroups := map[string][]*Group{} // in group order
	for _, g := range all {
		for _, h := range g.hashes {
			hashGroups[h] = append(hashGroups[h], g)
		}
	}
	shared := func(h string) int { return len(hashGroups[h]) }

	// Verdicts, the reasons of the listed groups' members, and the
	// relations each group's members give it, on every core: each group is
	// its own.
	parallel(len(all), func(_, lo, hi int) {
		for _, g := range all[lo:hi] {
			g.Verdict = verdict(g, shared, maxShared)
			if g.listed = opts.lists(g); g.listed {
				for _, m := range g.Members {
					m.Reasons = memberReasons(m.citation, g, shared, maxShared)
				}
			}
			relations(g, keyOf, func(key string) *Group { return groupByKey[key] }, sources, maxShared)
		}
	})
	for h, gs := range hashGroups {
		if len(gs) < 2 || len(gs) > maxShared {
			continue
		}
		list := slices.Clone(gs)
		slices.SortFunc(list, func(a, b *Group) int { return strings.Compare(a.ID, b.ID) })
		for _, a := range list {
			for _, b := range list {
				if a != b {
					addRelation(a, &GroupRelation{Type: RelSameContent, From: a.ID, To: b.ID, Evidence: "the same content hash " + h + " under different keys", Review: true})
				}
			}
		}
	}
	parallel(len(all), func(_, lo, hi int) {
		for _, g := range all[lo:hi] {
			if g.Relations == nil {
				g.Relations = []*GroupRelation{}
			}
			slices.SortStableFunc(g.Relations, func(a, b *GroupRelation) int {
				return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.To, b.To), strings.Compare(a.ToURL, b.ToURL), strings.Compare(a.Evidence, b.Evidence))
			})
		}
	})

	rep.Counts = counts(snap, rep, all)
	rep.Groups = make([]*Group, 0, len(all))
	for _, g := range all {
		if g.listed {
			rep.Groups = append(rep.Groups, g)
		}
	}
	return rep
}

// relations adds to g the relations its members' retrievals and declared
// or detected relations give it. groupOf returns the group of a key, or
// nil when no citation has it.
func relations(g *Group, keyOf func(string) string, groupOf func(string) *Group, sources map[string]map[string]bool, maxShared int) {
	add := func(typ, toKey, toURL, evidence string, review bool) {
		rel := &GroupRelation{Type: typ, From: g.ID, Evidence: evidence, Review: review}
		if to := groupOf(toKey); to != nil {
			if to == g {
				return
			}
			rel.To = to.ID
		} else {
			rel.ToURL = toURL
		}
		addRelation(g, rel)
	}
	for _, m := range g.Members {
		c := m.citation
		for _, r := range c.Retrievals {
			if r.FinalURL != "" && len(r.Hops) > 0 {
				t := keyOf(r.FinalURL)
				switch {
				case r.CrossesHost():
					add(RelCrossHostRedirect, t, r.FinalURL, fmt.Sprintf("%s redirects across hosts to %s (%d hops)", c.Raw, r.FinalURL, len(r.Hops)), true)
				case len(sources[t]) > maxShared:
					add(RelSharedRedirect, t, r.FinalURL, fmt.Sprintf("%s redirects to %s, which %d groups redirect to: not duplicate evidence", c.Raw, r.FinalURL, len(sources[t])), false)
				}
			}
			page := r.FinalURL
			if page == "" {
				page = c.Raw
			}
			for _, cn := range r.Canonicals {
				t := keyOf(cn.URL)
				add(RelCanonical, t, cn.URL, fmt.Sprintf("%s declares canonical %s (%s)", page, cn.URL, cn.Source), host(keyOf(page)) != host(t))
			}
		}
		for _, rel := range c.Relations {
			t := keyOf(rel.Target)
			ev := fmt.Sprintf("%s is %s %s (%s", c.Raw, strings.ReplaceAll(rel.Type, "_", " "), rel.Target, rel.Evidence)
			if rel.Format != "" {
				ev += ", format " + rel.Format
			}
			if rel.CapturedAt != "" {
				ev += ", captured " + rel.CapturedAt
			}
			add(rel.Type, t, rel.Target, ev+")", host(m.Key) != host(t))
		}
	}
}

// addRelation adds rel to g unless g has the same relation already (same
// type, target and evidence).
func addRelation(g *Group, rel *GroupRelation) {
	for _, r := range g.Relations {
		if r.Type == rel.Type && r.To == rel.To && r.ToURL == rel.ToURL && r.Evidence == rel.Evidence {
			return
		}
	}
	g.Relations = append(g.Relations, rel)
}

// memberReasons says why a citation is in its group. shared says how many
// groups have a content hash.
func memberReasons(c *Citation, g *Group, shared func(string) int, maxShared int) []string {
	var rs []string
	if c.Norm.Key == g.Key && len(g.Keys) == 0 {
		rs = append(rs, "key "+c.Norm.Key+" under policy "+c.Norm.Policy.String())
	} else {
		rs = append(rs, "key "+c.Norm.Key+" (the group joins keys "+strings.Join(g.Keys, ", ")+" by same-host redirects)")
	}
	if len(c.Norm.Rules) > 0 {
		rs = append(rs, "rules applied: "+strings.Join(c.Norm.Rules, ", "))
	}
	if len(c.Norm.RemovedParams) > 0 {
		rs = append(rs, "tracking parameters removed: "+strings.Join(c.Norm.RemovedParams, "&"))
	}
	if c.Norm.Compare == string(normalize.CompareContent) {
		rs = append(rs, "host rule "+c.Norm.HostRule+" is server-defined: identity needs a content hash or signature")
	}
	for _, r := range c.Retrievals {
		if len(r.Hops) > 0 && !r.CrossesHost() && r.FinalURL != "" {
			rs = append(rs, fmt.Sprintf("same-host redirect to %s (%d hops)", r.FinalURL, len(r.Hops)))
		}
	}
	for _, r := range c.Retrievals {
		switch {
		case r.ContentHash == "":
		case shared(r.ContentHash) > maxShared:
			rs = append(rs, fmt.Sprintf("content hash %s is shared by %d groups (a common page such as a login or error page): not evidence", r.ContentHash, shared(r.ContentHash)))
		default:
			rs = append(rs, "content hash "+r.ContentHash)
		}
	}
	return rs
}

func resolved(c *Citation) string {
	for i := len(c.Retrievals) - 1; i >= 0; i-- {
		if c.Retrievals[i].FinalURL != "" {
			return c.Retrievals[i].FinalURL
		}
	}
	return ""
}

// host returns the host of a key ("" when there is none).
func host(key string) string {
	i := strings.Index(key, "://")
	if i < 0 {
		return ""
	}
	h := key[i+3:]
	if j := strings.IndexAny(h, "/?#"); j >= 0 {
		h = h[:j]
	}
	return h
}

// groupID is stable for the same data: it depends on the policy digest and
// the group's smallest key only.
func groupID(policyDigest, key string) string {
	sum := sha256.Sum256([]byte(policyDigest + "\x00" + key))
	return "g-" + hex.EncodeToString(sum[:6])
}

type unionFind struct{ parent map[string]string }

func newUnionFind() *unionFind { return &unionFind{parent: map[string]string{}} }

func (u *unionFind) add(k string) {
	if _, ok := u.parent[k]; !ok {
		u.parent[k] = k
	}
}

func (u *unionFind) find(k string) string {
	for u.parent[k] != k {
		u.parent[k] = u.parent[u.parent[k]]
		k = u.parent[k]
	}
	return k
}

// union keeps the smaller key as the root, so the result does not depend
// on the order of unions.
func (u *unionFind) union(a, b string) {
	ra, rb := u.find(a), u.find(b)
	if ra == rb {
		return
	}
	if rb < ra {
		ra, rb = rb, ra
	}
	u.parent[rb] = ra
}

// counts sums up every group, listed or not.
func counts(snap *Snapshot, rep *Report, all []*Group) map[string]int {
	c := map[string]int{
		"citations":    len(snap.Citations),
		"rejected":     len(rep.Rejected),
		"unnormalized": len(rep.Missing),
		"groups":       len(all),
	}
	for _, g := range all {
		if len(g.Members) > 1 {
			c["groups_with_several_members"]++
		}
		c["verdict:"+g.Verdict]++
		for _, r := range g.Relations {
			c["relation:"+r.Type]++
		}
	}
	return c
}

// verdict says how strong the reason is to review g's members together.
// shared says how many groups have a content hash: one shared by more than
// maxShared groups is a common page and counts for nothing.
func verdict(g *Group, shared func(string) int, maxShared int) string {
	hashes := 0
	for _, h := range g.hashes {
		if shared(h) <= maxShared {
			hashes++
		}
	}
	allHashed := true
	serverDefined := false
	for _, m := range g.Members {
		c := m.citation
		has := false
		for _, r := range c.Retrievals {
			if r.ContentHash != "" && shared(r.ContentHash) <= maxShared {
				has = true
			}
		}
		allHashed = allHashed && has
		if c.Norm.Compare == string(normalize.CompareContent) {
			serverDefined = true
		}
	}
	switch {
	case hashes > 1:
		return VerdictConflict
	case hashes == 1 && allHashed:
		return VerdictIdentityConfirmed
	case serverDefined || g.redirect:
		return VerdictNeedsContentCheck
	default:
		return VerdictNormalizedCompare
	}
}
