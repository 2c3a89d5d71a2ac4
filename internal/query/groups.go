package query

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
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

// GroupOptions configures Groups. The zero value means the defaults.
type GroupOptions struct {
	MaxShared int // see DefaultMaxShared
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
	byKey := make(map[string][]*Citation, len(snap.Citations))
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
	type redirect struct {
		c      *Citation
		r      *Retrieval
		target string
	}
	sources := map[string]map[string]bool{} // target key -> source keys
	var redirects []redirect
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
			redirects = append(redirects, redirect{c, r, t})
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

	// Build the groups.
	groupOf := map[string]*Group{} // root key -> group
	for k, cs := range byKey {
		root := uf.find(k)
		g := groupOf[root]
		if g == nil {
			g = &Group{}
			groupOf[root] = g
		}
		g.Keys = append(g.Keys, k)
		for _, c := range cs {
			g.Members = append(g.Members, &Member{citation: c, CitationID: c.ID, RawURL: c.Raw, Fragment: c.Fragment, Key: k, ResolvedURL: resolved(c)})
		}
		if joined[k] {
			g.redirect = true
		}
	}
	group := func(key string) *Group {
		if _, ok := byKey[key]; !ok {
			if _, ok := uf.parent[key]; !ok {
				return nil
			}
		}
		return groupOf[uf.find(key)]
	}
	rep.Groups = make([]*Group, 0, len(groupOf))
	for _, g := range groupOf {
		rep.Groups = append(rep.Groups, g)
	}
	parallel(len(rep.Groups), func(_, lo, hi int) {
		for _, g := range rep.Groups[lo:hi] {
			slices.Sort(g.Keys)
			g.Key = g.Keys[0]
			if len(g.Keys) == 1 {
				g.Keys = nil
			}
			g.ID = groupID(snap.Policy.Digest, g.Key)
			slices.SortFunc(g.Members, func(a, b *Member) int { return strings.Compare(a.CitationID, b.CitationID) })
		}
	})
	slices.SortFunc(rep.Groups, func(a, b *Group) int { return strings.Compare(a.Key, b.Key) })

	// Content hashes: shared by too many groups, a hash is a common page
	// (an error or login page) and is evidence of nothing.
	hashGroups := map[string]map[*Group]bool{}
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			for _, r := range m.citation.Retrievals {
				if r.ContentHash == "" {
					continue
				}
				if hashGroups[r.ContentHash] == nil {
					hashGroups[r.ContentHash] = map[*Group]bool{}
				}
				hashGroups[r.ContentHash][g] = true
			}
		}
	}
	common := func(h string) bool { return len(hashGroups[h]) > maxShared }

	// Member reasons and verdicts, on every core: each group is its own.
	parallel(len(rep.Groups), func(_, lo, hi int) {
		for _, g := range rep.Groups[lo:hi] {
			verdict(g, common, hashGroups)
		}
	})

	// Relations between groups.
	seen := map[string]bool{}
	addRel := func(from *Group, typ, toKey, toURL, evidence string, review bool) {
		rel := &GroupRelation{Type: typ, From: from.ID, Evidence: evidence, Review: review}
		if to := group(toKey); to != nil {
			if to == from {
				return
			}
			rel.To = to.ID
		} else {
			rel.ToURL = toURL
		}
		id := rel.Type + "\x00" + rel.To + "\x00" + rel.ToURL + "\x00" + rel.Evidence
		if seen[from.ID+"\x00"+id] {
			return
		}
		seen[from.ID+"\x00"+id] = true
		from.Relations = append(from.Relations, rel)
	}
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			c := m.citation
			for _, r := range c.Retrievals {
				if r.FinalURL != "" && len(r.Hops) > 0 {
					t := keyOf(r.FinalURL)
					switch {
					case r.CrossesHost():
						addRel(g, RelCrossHostRedirect, t, r.FinalURL, fmt.Sprintf("%s redirects across hosts to %s (%d hops)", c.Raw, r.FinalURL, len(r.Hops)), true)
					case len(sources[t]) > maxShared:
						addRel(g, RelSharedRedirect, t, r.FinalURL, fmt.Sprintf("%s redirects to %s, which %d groups redirect to: not duplicate evidence", c.Raw, r.FinalURL, len(sources[t])), false)
					}
				}
				page := r.FinalURL
				if page == "" {
					page = c.Raw
				}
				for _, cn := range r.Canonicals {
					t := keyOf(cn.URL)
					addRel(g, RelCanonical, t, cn.URL, fmt.Sprintf("%s declares canonical %s (%s)", page, cn.URL, cn.Source), host(keyOf(page)) != host(t))
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
				addRel(g, rel.Type, t, rel.Target, ev+")", host(m.Key) != host(t))
			}
		}
	}
	for h, gs := range hashGroups {
		if len(gs) < 2 || len(gs) > maxShared {
			continue
		}
		list := make([]*Group, 0, len(gs))
		for g := range gs {
			list = append(list, g)
		}
		slices.SortFunc(list, func(a, b *Group) int { return strings.Compare(a.ID, b.ID) })
		for _, a := range list {
			for _, b := range list {
				if a != b {
					addRel(a, RelSameContent, b.Key, "", "the same content hash "+h+" under different keys", true)
				}
			}
		}
	}
	for _, g := range rep.Groups {
		if g.Relations == nil {
			g.Relations = []*GroupRelation{}
		}
		sort.SliceStable(g.Relations, func(i, j int) bool {
			a, b := g.Relations[i], g.Relations[j]
			return a.Type+a.To+a.ToURL+a.Evidence < b.Type+b.To+b.ToURL+b.Evidence
		})
	}

	rep.Counts = counts(snap, rep)
	return rep
}

// memberReasons says why a citation is in its group.
func memberReasons(c *Citation, g *Group) []string {
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

func counts(snap *Snapshot, rep *Report) map[string]int {
	c := map[string]int{
		"citations":    len(snap.Citations),
		"rejected":     len(rep.Rejected),
		"unnormalized": len(rep.Missing),
		"groups":       len(rep.Groups),
	}
	for _, g := range rep.Groups {
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

// verdict gives the members of g their reasons and g its verdict. common
// says whether a content hash is shared by too many groups to count.
func verdict(g *Group, common func(string) bool, hashGroups map[string]map[*Group]bool) {
	hashes := map[string]bool{}
	allHashed := true
	serverDefined := false
	for _, m := range g.Members {
		c := m.citation
		m.Reasons = memberReasons(c, g)
		has := false
		for _, r := range c.Retrievals {
			if r.ContentHash == "" {
				continue
			}
			if common(r.ContentHash) {
				m.Reasons = append(m.Reasons, fmt.Sprintf("content hash %s is shared by %d groups (a common page such as a login or error page): not evidence", r.ContentHash, len(hashGroups[r.ContentHash])))
				continue
			}
			hashes[r.ContentHash], has = true, true
			m.Reasons = append(m.Reasons, "content hash "+r.ContentHash)
		}
		allHashed = allHashed && has
		if c.Norm.Compare == string(normalize.CompareContent) {
			serverDefined = true
		}
	}
	switch {
	case len(hashes) > 1:
		g.Verdict = VerdictConflict
	case len(hashes) == 1 && allHashed:
		g.Verdict = VerdictIdentityConfirmed
	case serverDefined || g.redirect:
		g.Verdict = VerdictNeedsContentCheck
	default:
		g.Verdict = VerdictNormalizedCompare
	}
}
