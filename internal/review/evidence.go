package review

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
)

// Evidence is what a reviewer is shown of a group, in the form its digest
// is taken of: the policy, the verdict, each member with its key,
// retrievals and relations, and the group's relations. Lists are sorted,
// so the same evidence always has the same digest.
type Evidence struct {
	Policy    string           `json:"policy"` // the policy digest
	Verdict   string           `json:"verdict"`
	Members   []MemberEvidence `json:"members"`
	Relations []string         `json:"relations"` // "type -> target: evidence"
	// Groups are the two groups of a decision about a relation, each as
	// "id key K verdict V members a b ..."; none for a group or a pair.
	Groups []string `json:"groups,omitempty"`
}

// MemberEvidence is the evidence of one member citation.
type MemberEvidence struct {
	CitationID string   `json:"citation_id"`
	RawURL     string   `json:"raw_url"`
	Key        string   `json:"key"`
	Retrievals []string `json:"retrievals"` // final URL, status, content hash, outcome, snapshot, hop count
	Relations  []string `json:"relations"`  // the citation's own declared or detected relations
}

// EvidenceOf returns the evidence of a group as query computed it under
// the policy whose digest is policy.
func EvidenceOf(g *query.Group, policy string) Evidence {
	ev := Evidence{Policy: policy, Verdict: g.Verdict}
	for _, m := range g.Members {
		ev.Members = append(ev.Members, memberEvidence(m))
	}
	for _, r := range g.Relations {
		to := r.To
		if to == "" {
			to = r.ToURL
		}
		ev.Relations = append(ev.Relations, fmt.Sprintf("%s -> %s: %s", r.Type, to, r.Evidence))
	}
	return ev.normalized()
}

// memberEvidence returns the evidence of one citation.
func memberEvidence(m *query.Member) MemberEvidence {
	me := MemberEvidence{CitationID: m.CitationID, RawURL: m.RawURL, Key: m.Key}
	if c := m.Citation(); c != nil {
		for _, r := range c.Retrievals {
			me.Retrievals = append(me.Retrievals, fmt.Sprintf("final %s status %s hash %s outcome %s snapshot %s hops %d",
				r.FinalURL, r.FinalStatus, r.ContentHash, r.Outcome, r.SnapshotRef, len(r.Hops)))
		}
		for _, rel := range c.Relations {
			me.Relations = append(me.Relations, fmt.Sprintf("%s %s (%s)", rel.Type, rel.Target, rel.Evidence))
		}
	}
	return me
}

// PairEvidence returns the evidence of a pair of citations, a and b, as
// query computed them under the policy whose digest is policy: each
// citation's key, retrievals and relations. It changes when either
// citation's evidence does, not when their groups do.
func PairEvidence(a, b *query.Member, policy string) Evidence {
	return Evidence{Policy: policy, Members: []MemberEvidence{memberEvidence(a), memberEvidence(b)}}.normalized()
}

// RelationEvidence returns the evidence of the relation between the
// groups a and b: both groups' members with their evidence, each group's
// relations (named by the group), and each group's id, key, verdict and
// members. It changes when either group does.
func RelationEvidence(a, b *query.Group, policy string) Evidence {
	ev := Evidence{Policy: policy}
	for _, g := range []*query.Group{a, b} {
		e := EvidenceOf(g, policy)
		ev.Members = append(ev.Members, e.Members...)
		for _, r := range e.Relations {
			ev.Relations = append(ev.Relations, g.ID+": "+r)
		}
		ids := make([]string, 0, len(g.Members))
		for _, m := range g.Members {
			ids = append(ids, m.CitationID)
		}
		slices.Sort(ids)
		ev.Groups = append(ev.Groups, fmt.Sprintf("%s key %s verdict %s members %s", g.ID, g.Key, g.Verdict, strings.Join(ids, " ")))
	}
	return ev.normalized()
}

// normalized returns ev with its lists sorted and never nil.
func (ev Evidence) normalized() Evidence {
	sorted := func(ss []string) []string {
		ss = slices.Clone(ss)
		if ss == nil {
			ss = []string{}
		}
		slices.Sort(ss)
		return slices.Compact(ss)
	}
	out := Evidence{Policy: ev.Policy, Verdict: ev.Verdict, Relations: sorted(ev.Relations)}
	if len(ev.Groups) > 0 {
		out.Groups = sorted(ev.Groups)
	}
	for _, m := range ev.Members {
		m.Retrievals, m.Relations = sorted(m.Retrievals), sorted(m.Relations)
		out.Members = append(out.Members, m)
	}
	slices.SortFunc(out.Members, func(a, b MemberEvidence) int { return strings.Compare(a.CitationID, b.CitationID) })
	return out
}

// encode returns the summary's JSON text and its digest.
func (ev Evidence) encode() (string, string) {
	b, err := json.Marshal(ev)
	if err != nil {
		panic(err) // strings and slices only
	}
	return string(b), digestOf(b)
}

// Digest returns the digest of the evidence, as a decision stores it.
func (ev Evidence) Digest() string {
	_, d := ev.normalized().encode()
	return d
}

func (ev *Evidence) decode(s string) error {
	if s == "" {
		return fmt.Errorf("missing")
	}
	return json.Unmarshal([]byte(s), ev)
}

func (ev Evidence) citationIDs() []string {
	ids := make([]string, 0, len(ev.Members))
	for _, m := range ev.Members {
		ids = append(ids, m.CitationID)
	}
	slices.Sort(ids)
	return ids
}

// Changes lists what differs between the evidence a decision was shown
// (was) and the evidence of today (now): members gained and lost, and for
// each member kept its key, retrievals and relations; the group's
// relations and verdict. None means the decision is current. A new policy
// digest with the same keys is not a change.
func Changes(was, now Evidence) []string {
	var out []string
	old := map[string]MemberEvidence{}
	for _, m := range was.Members {
		old[m.CitationID] = m
	}
	cur := map[string]bool{}
	for _, m := range now.Members {
		cur[m.CitationID] = true
		o, ok := old[m.CitationID]
		if !ok {
			out = append(out, fmt.Sprintf("member %s joined the group (%s)", m.CitationID, m.RawURL))
			continue
		}
		if o.Key != m.Key {
			out = append(out, fmt.Sprintf("member %s: key %s was %s", m.CitationID, m.Key, o.Key))
		}
		for _, r := range added(o.Retrievals, m.Retrievals) {
			out = append(out, fmt.Sprintf("member %s: new retrieval: %s", m.CitationID, r))
		}
		for _, r := range added(m.Retrievals, o.Retrievals) {
			out = append(out, fmt.Sprintf("member %s: retrieval no longer read: %s", m.CitationID, r))
		}
		for _, r := range added(o.Relations, m.Relations) {
			out = append(out, fmt.Sprintf("member %s: new relation: %s", m.CitationID, r))
		}
	}
	for _, m := range was.Members {
		if !cur[m.CitationID] {
			out = append(out, fmt.Sprintf("member %s left the group (%s)", m.CitationID, m.RawURL))
		}
	}
	for _, r := range added(was.Relations, now.Relations) {
		out = append(out, "new group relation: "+r)
	}
	for _, r := range added(now.Relations, was.Relations) {
		out = append(out, "group relation gone: "+r)
	}
	for _, g := range added(now.Groups, was.Groups) {
		out = append(out, "group was: "+g)
	}
	for _, g := range added(was.Groups, now.Groups) {
		out = append(out, "group now: "+g)
	}
	if was.Verdict != now.Verdict {
		out = append(out, fmt.Sprintf("verdict %s was %s", now.Verdict, was.Verdict))
	}
	return out
}

// added returns the items of b that a lacks.
func added(a, b []string) []string {
	var out []string
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, s)
		}
	}
	return out
}

// NodesOf returns the nodes of a group's member citations, which a
// decision links to: the node the snapshot read, or the one ingest mints
// from the citation id (model.Mint("citation", id)).
func NodesOf(g *query.Group) []string {
	var ns []string
	for _, m := range g.Members {
		ns = append(ns, NodeOf(m))
	}
	return ns
}

// NodeOf returns the node of one citation, as NodesOf does.
func NodeOf(m *query.Member) string {
	if c := m.Citation(); c != nil && c.Node != "" {
		return c.Node
	}
	return model.Mint("citation", m.CitationID)
}
