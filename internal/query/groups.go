package query

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
)

// Relation types between groups. None of them joins groups.
const (
	RelCrossHostRedirect = "cross-host-redirect"
	RelCanonical         = "canonical"
	RelSameContent       = "same-content-hash"
	RelSameText          = model.RelSameText
	RelSharedRedirect    = "shared-redirect-target"
)

// GroupOptions configures Groups. The zero value means the defaults and
// every group listed.
type GroupOptions struct {
	MaxShared int // see model.DefaultMaxShared
	// MinSize and Verdict select the groups the report lists: those with at
	// least MinSize members and, when Verdict is set, that verdict. The
	// counts always cover every group, and relations may point to groups
	// not listed.
	MinSize int
	Verdict string
	// Review lists, besides, every group smaller than MinSize (of the
	// verdict asked for) that takes part in a relation that needs review,
	// as its source or its target, so that such a relation between single
	// citations (an AMP page and its origin, an archive snapshot and its
	// live page) is never left out.
	Review bool
	// Detail makes each listed member's citation whole (Member.Citation:
	// the engine, the observation time and every other stored field),
	// as a filter on them needs. It is read by a scan with
	// store.FieldDetail, never from a grouping view (whose rows keep what
	// a group lists, store.Listed): LoadGroupsFromView returns nil for it.
	Detail bool
}

// Report is the result of Groups.
type Report struct {
	Policy   PolicyRef      `json:"policy"`
	Groups   []*Group       `json:"groups"`
	Rejected []RejectedURL  `json:"rejected"`
	Missing  []string       `json:"unnormalized"` // citation ids with no normalization under the policy
	Counts   map[string]int `json:"counts"`
	// IncompleteRuns are the runs that did not complete (RunStatus): the
	// report may miss what they did not write.
	IncompleteRuns []Run    `json:"incomplete_runs"`
	Warnings       []string `json:"warnings,omitempty"`
	// unkeyed, when set, lists the rejected and unnormalized citations
	// in place of Rejected and Missing, which are then empty: the rest of
	// a report written from a grouping view (GroupSet.Write) reads them
	// again when asked instead of holding them (some 450 bytes each, a
	// few hundred MB at tens of millions of citations).
	unkeyed func(ctx context.Context, rejected func(RejectedURL) error, missing func(string) error) error
	// mapRejected, when set, is applied to each rejected citation read
	// through unkeyed (WithRejectedMap).
	mapRejected func(RejectedURL) RejectedURL
}

// EachRejected calls fn with each rejected citation, in citation id
// order: those of Rejected, or those read again from the view.
func (r *Report) EachRejected(ctx context.Context, fn func(RejectedURL) error) error {
	if r.unkeyed == nil {
		for _, x := range r.Rejected {
			if err := fn(x); err != nil {
				return err
			}
		}
		return nil
	}
	return r.unkeyed(ctx, func(x RejectedURL) error {
		if r.mapRejected != nil {
			x = r.mapRejected(x)
		}
		return fn(x)
	}, nil)
}

// EachMissing calls fn with the id of each unnormalized citation, in
// citation id order: those of Missing, or those read again from the
// view.
func (r *Report) EachMissing(ctx context.Context, fn func(string) error) error {
	if r.unkeyed == nil {
		for _, id := range r.Missing {
			if err := fn(id); err != nil {
				return err
			}
		}
		return nil
	}
	return r.unkeyed(ctx, nil, fn)
}

// WithRejectedMap returns a copy of r whose rejected citations read
// through EachRejected from a view go through f (Rejected itself is not
// changed: a caller changing values changes the slice itself).
func (r *Report) WithRejectedMap(f func(RejectedURL) RejectedURL) *Report {
	c := *r
	c.mapRejected = f
	return &c
}

// Group is a set of citations that are probably the same resource, with
// the reason for each member and the relations to other groups.
type Group struct {
	ID      string   `json:"id"`
	Key     string   `json:"key"`
	Keys    []string `json:"keys,omitempty"` // every key in the group when a redirect joined several
	Verdict string   `json:"verdict"`
	// ConfirmedBy says which evidence confirmed an identity-confirmed
	// group (ConfirmedByContentHash, ...); empty otherwise. It is not in
	// the JSON (each member's reasons say it); stats counts it.
	ConfirmedBy string           `json:"-"`
	Members     []*Member        `json:"members"`
	Relations   []*GroupRelation `json:"relations"`
}

// Member is one citation in a group. Every value is the member's own.
type Member struct {
	CitationID  string   `json:"citation_id"`
	RawURL      string   `json:"raw_url"`
	Fragment    *string  `json:"fragment"`
	ResolvedURL string   `json:"resolved_url,omitempty"`
	Key         string   `json:"key"`
	Reasons     []string `json:"reasons"`
	// Passage is the check of the citation's cited_text against the main
	// text of its latest successful retrieval's extraction; nil without
	// cited_text or such an extraction.
	Passage  *Passage `json:"passage,omitempty"`
	citation *Citation
}

// Citation returns the member's citation as the snapshot read it: its
// node, its normalization's node and its retrievals' nodes, which an RDF
// export of the group links to.
func (m *Member) Citation() *Citation { return m.citation }

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
	to       int32  // the number of group To while grouping, -1 for none
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
// The groups are found on compact facts and each group's members,
// reasons and relations are worked out on every core, the reasons only
// for the groups the report lists (grouping.go).
func Groups(snap *Snapshot, opts GroupOptions) *Report {
	rep, err := newGrouping(snapshotFacts(snap), snap, opts).run(context.Background(), nil, nil)
	if err != nil {
		panic(err) // only a canceled context or a failed write end a run
	}
	return rep
}

// relations adds to g the relations its members' retrievals and declared
// or detected relations give it, repeats included. target returns the id
// and number of the group of a key ("" and -1 when no group has it) and
// whether that is g itself; sources says how many keys redirect to a key.
func relations(g *Group, keyOf func(string) string, target func(string) (string, int32, bool), sources func(string) int, maxShared int) {
	add := func(typ, toKey, toURL, evidence string, review bool) {
		rel := &GroupRelation{Type: typ, From: g.ID, Evidence: evidence, Review: review, to: -1}
		switch to, num, self := target(toKey); {
		case self:
			return
		case to != "":
			rel.To, rel.to = to, num
		default:
			rel.ToURL = toURL
		}
		g.Relations = append(g.Relations, rel) // repeats are dropped by the caller
	}
	for _, m := range g.Members {
		c := m.citation
		for _, r := range c.Retrievals {
			if r.FinalURL != "" && len(r.Hops) > 0 {
				t := keyOf(r.FinalURL)
				switch n := sources(t); {
				case r.CrossesHost():
					add(RelCrossHostRedirect, t, r.FinalURL, fmt.Sprintf("%s redirects across hosts to %s (%s)", c.Raw, r.FinalURL, hopCount(len(r.Hops))), true)
				case n > maxShared:
					add(RelSharedRedirect, t, r.FinalURL, fmt.Sprintf("%s redirects to %s, which %d groups redirect to: not duplicate evidence", c.Raw, r.FinalURL, n), false)
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

// cmpRelation orders relations by type, target and evidence.
func cmpRelation(a, b *GroupRelation) int {
	return cmp.Or(strings.Compare(a.Type, b.Type), strings.Compare(a.To, b.To), strings.Compare(a.ToURL, b.ToURL), strings.Compare(a.Evidence, b.Evidence))
}

// reasoner says why citations are in group g. The lines that depend only
// on a member's key or normalization are made once per group: members of a
// group mostly share them.
type reasoner struct {
	g         *Group
	shared    func(hash string) int // how many groups have a content hash
	maxShared int
	keys      []string // key, then its line, for each key seen
	norms     []*Normalization
	lines     [][]string             // lines of norms[i]
	index     map[*Normalization]int // position in norms, once there are many
	pool      []string               // room for the next members' reasons
}

// reasons says why c is in the group.
func (r *reasoner) reasons(c *Citation) []string {
	n := c.Norm
	const room = 6 // a member rarely has more reasons: more still fit, in a slice of their own
	if len(r.pool) < room {
		r.pool = make([]string, room*32)
	}
	rs := r.pool[:0:room]
	r.pool = r.pool[room:]
	i := 0
	for i < len(r.keys) && r.keys[i] != n.Key {
		i += 2
	}
	if i == len(r.keys) {
		line := "key " + n.Key + " under policy " + n.Policy.String()
		if n.Key != r.g.Key || len(r.g.Keys) > 0 {
			line = "key " + n.Key + " (the group joins keys " + strings.Join(r.g.Keys, ", ") + " by same-host redirects)"
		}
		r.keys = append(r.keys, n.Key, line)
	}
	rs = append(rs, r.keys[i+1])
	j := -1
	if r.index != nil {
		if k, ok := r.index[n]; ok {
			j = k
		}
	} else {
		j = slices.Index(r.norms, n)
	}
	if j < 0 {
		var lines []string
		if len(n.Rules) > 0 {
			lines = append(lines, "rules applied: "+strings.Join(n.Rules, ", "))
		}
		if len(n.RemovedParams) > 0 {
			lines = append(lines, "tracking parameters removed: "+strings.Join(n.RemovedParams, "&"))
		}
		if n.Compare == string(normalize.CompareContent) {
			lines = append(lines, "host rule "+n.HostRule+" is server-defined: identity needs a content hash or signature")
		}
		j = len(r.norms)
		r.norms, r.lines = append(r.norms, n), append(r.lines, lines)
		switch {
		case r.index != nil:
			r.index[n] = j
		case len(r.norms) > 16: // a big group: look normalizations up by map from now on
			r.index = make(map[*Normalization]int, 2*len(r.norms))
			for k, m := range r.norms {
				r.index[m] = k
			}
		}
	}
	rs = append(rs, r.lines[j]...)
	for _, rt := range c.Retrievals {
		if len(rt.Hops) > 0 && !rt.CrossesHost() && rt.FinalURL != "" {
			rs = append(rs, fmt.Sprintf("same-host redirect to %s (%s)", rt.FinalURL, hopCount(len(rt.Hops))))
		}
	}
	for _, rt := range c.Retrievals {
		switch h := rt.ContentHash; {
		case !rt.Successful():
			if h != "" {
				rs = append(rs, "content hash "+h+" of an unsuccessful retrieval ("+whyUnsuccessful(rt)+"): not evidence")
			} else if x := rt.Current(); x != nil && x.SoftError != "" {
				rs = append(rs, "retrieval is "+x.SoftError+": not evidence")
			}
			continue
		case h == "":
		case r.shared(h) > r.maxShared:
			rs = append(rs, fmt.Sprintf("content hash %s is shared by %d groups (a common page such as a login or error page): not evidence", h, r.shared(h)))
		default:
			rs = append(rs, "content hash "+h)
		}
		if x := rt.Current(); x != nil && (x.TextDigest != "" || x.SimHash != "") {
			line := "main text"
			if x.TextDigest != "" {
				line += " digest " + x.TextDigest
			}
			if x.SimHash != "" {
				line += " SimHash " + x.SimHash
			}
			rs = append(rs, line)
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

// groupID names a group by its smallest key alone: the first 48 bits of
// the key's SHA-256. It does not depend on the policy, so a group keeps its
// id across policy versions and renormalization whenever its smallest key
// is unchanged, and notes and review decisions kept by id outside provgraph
// keep pointing at it. A group whose smallest key changes (a rule now
// folds it differently, a member with a smaller key joined) gets a new id;
// decisions attach to member citations, not to ids, for that reason.
func groupID(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "g-" + hex.EncodeToString(sum[:6])
}

// hopCount says how many redirect hops: "1 hop", "2 hops".
func hopCount(n int) string {
	if n == 1 {
		return "1 hop"
	}
	return fmt.Sprintf("%d hops", n)
}
