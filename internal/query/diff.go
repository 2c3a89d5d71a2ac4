package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/normalize"
)

// PolicyDiff says how the review groups change between two policies, so
// that a new policy never changes historical counts silently.
type PolicyDiff struct {
	A       PolicyRef      `json:"a"`
	B       PolicyRef      `json:"b"`
	Changes []GroupDiff    `json:"changes"`
	Rules   []string       `json:"policy_differences"` // rule actions, parameters and host rules that differ
	Counts  map[string]int `json:"counts"`
}

// GroupDiff is one group that merges or splits.
type GroupDiff struct {
	Kind string `json:"kind"` // "merge": one B group holds several A groups; "split": the reverse
	// Group is the merged group (in B) or the split group (in A).
	Group     GroupRef   `json:"group"`
	Parts     []GroupRef `json:"parts"`
	Citations []string   `json:"citations"`
	// Rules are the normalization rules applied under one policy and not
	// the other to the citations concerned: what is responsible.
	Rules []string `json:"rules"`
}

// GroupRef names a group.
type GroupRef struct {
	ID  string `json:"id"`
	Key string `json:"key"`
}

// DiffPolicies compares the groups of two snapshots of the same database.
func DiffPolicies(a, b *Snapshot, opts GroupOptions) *PolicyDiff {
	ra, rb := Groups(a, opts), Groups(b, opts)
	d := &PolicyDiff{A: a.Policy, B: b.Policy, Changes: []GroupDiff{}, Rules: policyTextDifferences(a.Policy, b.Policy), Counts: map[string]int{}}
	inA, inB := memberGroups(ra), memberGroups(rb)
	stepsA, stepsB := steps(a), steps(b)
	changes := func(kind string, from *Report, fromOf, toOf map[string]*Group) {
		for _, g := range from.Groups {
			parts := map[*Group]bool{}
			var cites []string
			for _, m := range g.Members {
				if t := toOf[m.CitationID]; t != nil {
					parts[t] = true
					cites = append(cites, m.CitationID)
				}
			}
			if len(parts) < 2 {
				continue
			}
			gd := GroupDiff{Kind: kind, Group: GroupRef{g.ID, g.Key}, Citations: cites}
			for p := range parts {
				gd.Parts = append(gd.Parts, GroupRef{p.ID, p.Key})
			}
			slices.SortFunc(gd.Parts, func(x, y GroupRef) int { return strings.Compare(x.Key, y.Key) })
			gd.Rules = responsible(cites, stepsA, stepsB)
			d.Changes = append(d.Changes, gd)
			d.Counts[kind]++
		}
	}
	changes("merge", rb, inB, inA)
	changes("split", ra, inA, inB)
	slices.SortFunc(d.Changes, func(x, y GroupDiff) int {
		return strings.Compare(x.Kind+x.Group.Key, y.Kind+y.Group.Key)
	})
	d.Counts["groups_a"], d.Counts["groups_b"] = len(ra.Groups), len(rb.Groups)
	return d
}

func memberGroups(r *Report) map[string]*Group {
	m := map[string]*Group{}
	for _, g := range r.Groups {
		for _, mem := range g.Members {
			m[mem.CitationID] = g
		}
	}
	return m
}

// steps maps each citation to the set of rules its normalization applied.
func steps(s *Snapshot) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, c := range s.Citations {
		out[c.ID] = ruleSet(c)
	}
	return out
}

// ruleSet is the set of rules c's normalization applied, its host rule
// included; empty for a citation without one (or nil).
func ruleSet(c *Citation) map[string]bool {
	set := map[string]bool{}
	if c != nil && c.Norm != nil {
		for _, r := range c.Norm.Rules {
			set[r] = true
		}
		if c.Norm.HostRule != "" {
			set["host rule "+c.Norm.HostRule] = true
		}
	}
	return set
}

// responsible lists the rules applied under exactly one of the policies to
// the given citations, marked with the policy that applied them.
func responsible(cites []string, a, b map[string]map[string]bool) []string {
	pairs := make([][2]map[string]bool, len(cites))
	for i, c := range cites {
		pairs[i] = [2]map[string]bool{a[c], b[c]}
	}
	return onlyUnderOne(pairs)
}

// onlyUnderOne lists the rules in one set of a pair and not the other
// (each pair: the rules a citation's normalization applied under A, then
// under B), each once, marked with the policy that applied it, sorted.
func onlyUnderOne(pairs [][2]map[string]bool) []string {
	set := map[string]bool{}
	for _, p := range pairs {
		a, b := p[0], p[1]
		for r := range a {
			if !b[r] {
				set[r+" (only under A)"] = true
			}
		}
		for r := range b {
			if !a[r] {
				set[r+" (only under B)"] = true
			}
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// policyTextDifferences compares the two policies' texts: rule actions,
// tracking parameters, default ports and host rules.
func policyTextDifferences(a, b PolicyRef) []string {
	pa, ea := normalize.ParsePolicy([]byte(a.Text), a.String())
	pb, eb := normalize.ParsePolicy([]byte(b.Text), b.String())
	if ea != nil || eb != nil {
		return []string{"the policy texts could not be compared"}
	}
	var out []string
	for _, r := range normalize.Rules() {
		if x, y := pa.Action(r), pb.Action(r); x != y {
			out = append(out, fmt.Sprintf("rule %s: %s in A, %s in B", r, x, y))
		}
	}
	names := func(p *normalize.Policy) map[string]bool {
		m := map[string]bool{}
		for _, t := range p.TrackingParams() {
			m[t.Name] = true
		}
		return m
	}
	na, nb := names(pa), names(pb)
	for n := range na {
		if !nb[n] {
			out = append(out, "tracking parameter "+n+" only in A")
		}
	}
	for n := range nb {
		if !na[n] {
			out = append(out, "tracking parameter "+n+" only in B")
		}
	}
	hosts := func(p *normalize.Policy) map[string]string {
		m := map[string]string{}
		for _, h := range p.HostRules() {
			m[h.Name] = fmt.Sprintf("%v path_case=%s trailing_slash=%s", h.Hosts, h.PathCase, h.TrailingSlash)
		}
		return m
	}
	ha, hb := hosts(pa), hosts(pb)
	for n, v := range ha {
		if hb[n] != v {
			out = append(out, fmt.Sprintf("host rule %s: %s in A, %q in B", n, v, hb[n]))
		}
	}
	for n, v := range hb {
		if _, ok := ha[n]; !ok {
			out = append(out, fmt.Sprintf("host rule %s only in B: %s", n, v))
		}
	}
	if fmt.Sprint(pa.DefaultPorts()) != fmt.Sprint(pb.DefaultPorts()) {
		out = append(out, fmt.Sprintf("default ports: %v in A, %v in B", pa.DefaultPorts(), pb.DefaultPorts()))
	}
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}
