package query

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/provgraph/provgraph/internal/model"
)

// Stats are the counts of a snapshot. URL counts and ownership (by
// registrable domain) are reported apart: two URLs of one owner are still
// two URLs.
type Stats struct {
	Policy               PolicyRef      `json:"policy"`
	Citations            int            `json:"citations"`
	DistinctRawURLs      int            `json:"distinct_raw_urls"`
	DistinctResolvedURLs int            `json:"distinct_resolved_urls"`
	DistinctKeys         int            `json:"distinct_keys"`
	Groups               int            `json:"groups"`
	GroupsWithSeveral    int            `json:"groups_with_several_members"`
	GroupsByVerdict      map[string]int `json:"groups_by_verdict"`
	// GroupsByConfirmation counts the identity-confirmed groups by the
	// evidence that confirmed them (ConfirmedByContentHash, ...).
	GroupsByConfirmation map[string]int `json:"groups_by_confirmation,omitempty"`
	RelationsByType      map[string]int `json:"relations_by_type"`
	Rejected             int            `json:"rejected"`
	Unnormalized         int            `json:"unnormalized"`
	Domains              []DomainCount  `json:"ownership_by_registrable_domain"`
	// IncompleteRuns are the runs that did not complete: the counts may
	// miss what they did not write.
	IncompleteRuns []Run `json:"incomplete_runs"`
	// Explain names the --explain argument that lists what is behind each
	// deduplicated count.
	Explain map[string]string `json:"explain"`
}

// DomainCount counts by registrable domain (eTLD+1 of the key's host, from
// the public suffix list).
type DomainCount struct {
	Domain    string `json:"domain"`
	Citations int    `json:"citations"`
	Keys      int    `json:"keys"`
	Groups    int    `json:"groups"`
}

// ComputeStats counts a snapshot and its groups.
func ComputeStats(snap *Snapshot, rep *Report) *Stats {
	s := &Stats{
		Policy: snap.Policy, Citations: len(snap.Citations),
		GroupsByVerdict: map[string]int{}, RelationsByType: map[string]int{}, GroupsByConfirmation: map[string]int{},
		Rejected: len(rep.Rejected), Unnormalized: len(rep.Missing), Groups: len(rep.Groups),
		Domains: []DomainCount{}, IncompleteRuns: rep.IncompleteRuns,
		Explain: map[string]string{
			"distinct_raw_urls":      "raw-urls",
			"distinct_resolved_urls": "resolved-urls",
			"distinct_keys":          "keys",
			"groups":                 "groups",
			"rejected":               "rejected",
			"ownership":              "domain:DOMAIN",
			"groups_by_verdict":      "verdict:VERDICT",
			"groups_by_confirmation": "confirmed:EVIDENCE",
			"relations_by_type":      "relation:TYPE",
		},
	}
	raws, resolvedURLs, keys := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range snap.Citations {
		raws[c.Raw] = true
		for _, r := range c.Retrievals {
			if r.FinalURL != "" {
				resolvedURLs[r.FinalURL] = true
			}
		}
		if c.Norm != nil && !c.Norm.Rejected() {
			keys[c.Norm.Key] = true
		}
	}
	s.DistinctRawURLs, s.DistinctResolvedURLs, s.DistinctKeys = len(raws), len(resolvedURLs), len(keys)
	domains := map[string]*DomainCount{}
	for _, g := range rep.Groups {
		if len(g.Members) > 1 {
			s.GroupsWithSeveral++
		}
		s.GroupsByVerdict[g.Verdict]++
		if g.ConfirmedBy != "" {
			s.GroupsByConfirmation[g.ConfirmedBy]++
		}
		for _, r := range g.Relations {
			s.RelationsByType[r.Type]++
		}
		seenKey := map[string]bool{}
		seenDomain := map[string]bool{}
		for _, m := range g.Members {
			d := RegistrableDomain(host(m.Key))
			dc := domains[d]
			if dc == nil {
				dc = &DomainCount{Domain: d}
				domains[d] = dc
			}
			dc.Citations++
			if !seenKey[m.Key] {
				seenKey[m.Key] = true
				dc.Keys++
			}
			if !seenDomain[d] {
				seenDomain[d] = true
				dc.Groups++
			}
		}
	}
	for _, d := range domains {
		s.Domains = append(s.Domains, *d)
	}
	slices.SortFunc(s.Domains, func(a, b DomainCount) int {
		if a.Citations != b.Citations {
			return b.Citations - a.Citations
		}
		return strings.Compare(a.Domain, b.Domain)
	})
	return s
}

// RegistrableDomain returns the eTLD+1 of a host, or the host itself for an
// IP address or a host that is a public suffix.
func RegistrableDomain(h string) string {
	h = strings.TrimSuffix(h, ".")
	if i := strings.LastIndexByte(h, ':'); i >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:i] // a port
	}
	if _, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		return h
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(h)
	if err != nil {
		return h
	}
	return d
}

// ExplainLine is one item behind a count.
type ExplainLine struct {
	Item    string   `json:"item"`
	Group   string   `json:"group,omitempty"`
	Members []string `json:"citations"`
}

// Explain lists what is behind a count: "groups", "keys", "raw-urls",
// "resolved-urls", "rejected", "domain:D", "verdict:V", "confirmed:E" or
// "relation:T".
func Explain(snap *Snapshot, rep *Report, what string) ([]ExplainLine, error) {
	out := []ExplainLine{}
	members := func(g *Group) []string {
		var ids []string
		for _, m := range g.Members {
			ids = append(ids, m.CitationID)
		}
		return ids
	}
	byValue := func(value func(*Citation) []string) {
		m := map[string][]string{}
		for _, c := range snap.Citations {
			for _, v := range value(c) {
				m[v] = append(m[v], c.ID)
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, ExplainLine{Item: k, Members: m[k]})
		}
	}
	name, arg, _ := strings.Cut(what, ":")
	switch name {
	case "groups":
		for _, g := range rep.Groups {
			out = append(out, ExplainLine{Item: g.Key, Group: g.ID, Members: members(g)})
		}
	case "keys":
		byValue(func(c *Citation) []string {
			if c.Norm == nil || c.Norm.Rejected() {
				return nil
			}
			return []string{c.Norm.Key}
		})
	case "raw-urls":
		byValue(func(c *Citation) []string { return []string{c.Raw} })
	case "resolved-urls":
		byValue(func(c *Citation) []string {
			var v []string
			for _, r := range c.Retrievals {
				if r.FinalURL != "" && !slices.Contains(v, r.FinalURL) {
					v = append(v, r.FinalURL)
				}
			}
			return v
		})
	case "rejected":
		for _, r := range rep.Rejected {
			out = append(out, ExplainLine{Item: r.RawURL + " (" + r.Code + ")", Members: []string{r.CitationID}})
		}
	case "domain", "verdict", "confirmed", "relation":
		if arg == "" {
			return nil, fmt.Errorf("explain %s: give a value, as in %s:%s", name, name, map[string]string{"domain": "example.com", "verdict": model.VerdictConflict, "confirmed": ConfirmedByTextDigest, "relation": RelCanonical}[name])
		}
		for _, g := range rep.Groups {
			match := false
			switch name {
			case "domain":
				for _, m := range g.Members {
					match = match || RegistrableDomain(host(m.Key)) == arg
				}
			case "verdict":
				match = g.Verdict == arg
			case "confirmed":
				match = g.ConfirmedBy == arg
			case "relation":
				for _, r := range g.Relations {
					match = match || r.Type == arg
				}
			}
			if match {
				out = append(out, ExplainLine{Item: g.Key, Group: g.ID, Members: members(g)})
			}
		}
	default:
		return nil, fmt.Errorf("explain %q: want groups, keys, raw-urls, resolved-urls, rejected, domain:D, verdict:V, confirmed:E or relation:T", what)
	}
	return out, nil
}
