package query

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/publicsuffix"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
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

// ComputeStats counts a snapshot and its groups, all in memory. The
// counts of a database too large for that are made as its groups are
// written (StatsCounter, DistinctURLs); TestStreamedStatsEqual holds the
// two equal.
func ComputeStats(snap *Snapshot, rep *Report) *Stats {
	c := NewStatsCounter(snap.Policy)
	raws, resolvedURLs, keys := map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, cit := range snap.Citations {
		raws[cit.Raw] = true
		for _, r := range cit.Retrievals {
			if r.FinalURL != "" {
				resolvedURLs[r.FinalURL] = true
			}
		}
		if cit.Norm != nil && !cit.Norm.Rejected() {
			keys[cit.Norm.Key] = true
		}
	}
	for _, g := range rep.Groups {
		c.Group(g)
	}
	s := c.Stats(len(snap.Citations), len(raws), len(resolvedURLs), rep)
	s.Rejected, s.Unnormalized, s.Groups = len(rep.Rejected), len(rep.Missing), len(rep.Groups)
	s.DistinctKeys = len(keys)
	return s
}

// StatsCounter makes Stats a group at a time, as a listing of every group
// (GroupOptions.MinSize 1) is written: its memory is the counts by
// verdict, relation type and registrable domain, not the groups. It is
// safe for concurrent use (GroupSet.Write's encode runs on every core).
type StatsCounter struct {
	mu      sync.Mutex
	s       *Stats
	groups  int
	keys    int // distinct keys: a key is in one group only
	domains map[string]*DomainCount
}

// NewStatsCounter returns a counter of the groups of policy pol.
func NewStatsCounter(pol PolicyRef) *StatsCounter {
	return &StatsCounter{domains: map[string]*DomainCount{}, s: &Stats{
		Policy: pol, GroupsByVerdict: map[string]int{}, RelationsByType: map[string]int{}, GroupsByConfirmation: map[string]int{},
		Domains: []DomainCount{},
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
	}}
}

// Group counts g, one of the groups: each group once.
func (c *StatsCounter) Group(g *Group) {
	// The registrable domains first, outside the lock: the public suffix
	// list is most of the work.
	type domainCount struct {
		d               string
		citations, keys int
	}
	var ds []domainCount
	seenKey := map[string]bool{}
	for _, m := range g.Members {
		d := RegistrableDomain(host(m.Key))
		i := slices.IndexFunc(ds, func(x domainCount) bool { return x.d == d })
		if i < 0 {
			ds = append(ds, domainCount{d: d})
			i = len(ds) - 1
		}
		ds[i].citations++
		if !seenKey[m.Key] {
			seenKey[m.Key] = true
			ds[i].keys++
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	c.groups++
	c.keys += len(seenKey)
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
	for _, x := range ds {
		dc := c.domains[x.d]
		if dc == nil {
			dc = &DomainCount{Domain: x.d}
			c.domains[x.d] = dc
		}
		dc.Citations += x.citations
		dc.Keys += x.keys
		dc.Groups++
	}
}

// Stats returns the counts of the groups counted, with the database's:
// its citations and distinct raw and resolved URLs (DistinctURLs), and
// from rep (GroupSet.Write's report) the rejected and unnormalized
// citations (Counts) and the incomplete runs.
func (c *StatsCounter) Stats(citations, rawURLs, resolvedURLs int, rep *Report) *Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.s
	s.Citations, s.DistinctRawURLs, s.DistinctResolvedURLs = citations, rawURLs, resolvedURLs
	s.Groups, s.DistinctKeys = c.groups, c.keys
	s.Rejected, s.Unnormalized = rep.Counts["rejected"], rep.Counts["unnormalized"]
	s.IncompleteRuns = rep.IncompleteRuns
	s.Domains = s.Domains[:0]
	for _, d := range c.domains {
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

// urlCounter counts the distinct raw and final URLs without a scan
// (citestore.Store.DistinctURLs, from its POS index): a backend's scan
// may hold every citation's fields (the bbolt one does, about 280 bytes a
// citation).
type urlCounter interface {
	DistinctURLs(ctx context.Context) (raw, final int, err error)
}

// DistinctURLs counts the distinct raw URLs of src's citations and the
// distinct final URLs of their retrievals: by the backend when it can
// (urlCounter), else by one scan of those two fields, a bit per handle:
// equal handles are equal texts within a scan (store.Handle), so no URL is
// held.
func DistinctURLs(ctx context.Context, src store.Scanner, policyDigest string) (raw, resolved int, err error) {
	if uc, ok := src.(urlCounter); ok {
		if raw, resolved, err = uc.DistinctURLs(ctx); err != nil {
			return 0, 0, fmt.Errorf("query: distinct URLs: %w", err)
		}
		return raw, resolved, nil
	}
	return distinctScanned(ctx, src, policyDigest)
}

// distinctScanned is DistinctURLs by a scan.
func distinctScanned(ctx context.Context, src store.Scanner, policyDigest string) (raw, resolved int, err error) {
	var rawSeen, finalSeen bitSet
	_, err = src.Scan(ctx, policyDigest, store.FieldRaw|store.FieldFinalURL, func(r *store.Row) error {
		if r.Raw != 0 && rawSeen.add(r.Raw) {
			raw++
		}
		for _, h := range r.FinalURL {
			if h != 0 && finalSeen.add(h) {
				resolved++
			}
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("query: distinct URLs: %w", err)
	}
	return raw, resolved, nil
}

// bitSet is a set of handles, a bit each, grown as they come.
type bitSet []uint64

// add adds h and says whether it was new.
func (b *bitSet) add(h store.Handle) bool {
	i := int(h >> 6)
	if i >= len(*b) {
		n := max(i+1, 2*len(*b))
		*b = slices.Grow(*b, n-len(*b))[:n]
	}
	w, bit := &(*b)[i], uint64(1)<<(h&63)
	if *w&bit != 0 {
		return false
	}
	*w |= bit
	return true
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

// GroupExplainer returns, for an explanation that lists groups ("groups",
// "domain:D", "verdict:V", "confirmed:E", "relation:T"), whether a group
// is listed, and ok true; for any other, ok false. Explain lists the
// groups it selects in the report's order, each with its key, id and
// members; a listing that reads the groups a batch at a time (from a
// grouping view) selects the same with it. A name without its value is
// an error.
func GroupExplainer(what string) (match func(*Group) bool, ok bool, err error) {
	name, arg, _ := strings.Cut(what, ":")
	switch name {
	case "groups":
		return func(*Group) bool { return true }, true, nil
	case "domain", "verdict", "confirmed", "relation":
	default:
		return nil, false, nil
	}
	if arg == "" {
		return nil, true, fmt.Errorf("explain %s: give a value, as in %s:%s", name, name, map[string]string{"domain": "example.com", "verdict": model.VerdictConflict, "confirmed": ConfirmedByTextDigest, "relation": RelCanonical}[name])
	}
	return func(g *Group) bool {
		switch name {
		case "domain":
			for _, m := range g.Members {
				if RegistrableDomain(host(m.Key)) == arg {
					return true
				}
			}
		case "verdict":
			return g.Verdict == arg
		case "confirmed":
			return g.ConfirmedBy == arg
		case "relation":
			for _, r := range g.Relations {
				if r.Type == arg {
					return true
				}
			}
		}
		return false
	}, true, nil
}

// ExplainsValues returns, for an explanation that lists citations by a
// value of theirs ("keys", "raw-urls", "resolved-urls"), the values a
// citation is listed under (its key unless rejected or never normalized;
// its raw URL; the distinct final URLs of its retrievals), and ok true;
// for any other, ok false.
func ExplainsValues(what string) (value func(*Citation) []string, ok bool) {
	switch what {
	case "keys":
		return func(c *Citation) []string {
			if c.Norm == nil || c.Norm.Rejected() {
				return nil
			}
			return []string{c.Norm.Key}
		}, true
	case "raw-urls":
		return func(c *Citation) []string { return []string{c.Raw} }, true
	case "resolved-urls":
		return func(c *Citation) []string {
			var v []string
			for _, r := range c.Retrievals {
				if r.FinalURL != "" && !slices.Contains(v, r.FinalURL) {
					v = append(v, r.FinalURL)
				}
			}
			return v
		}, true
	}
	return nil, false
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
	if match, ok, err := GroupExplainer(what); ok || err != nil {
		if err != nil {
			return nil, err
		}
		for _, g := range rep.Groups {
			if match(g) {
				out = append(out, ExplainLine{Item: g.Key, Group: g.ID, Members: members(g)})
			}
		}
		return out, nil
	}
	if value, ok := ExplainsValues(what); ok {
		byValue(value)
		return out, nil
	}
	name, _, _ := strings.Cut(what, ":")
	switch name {
	case "rejected":
		for _, r := range rep.Rejected {
			out = append(out, RejectedLine(r))
		}
	default:
		return nil, fmt.Errorf("explain %q: want groups, keys, raw-urls, resolved-urls, rejected, domain:D, verdict:V, confirmed:E or relation:T", what)
	}
	return out, nil
}

// RejectedLine is the line of Explain "rejected" for one rejected
// citation: its raw URL and error code, and its id.
func RejectedLine(r RejectedURL) ExplainLine {
	return ExplainLine{Item: r.RawURL + " (" + r.Code + ")", Members: []string{r.CitationID}}
}

// StreamStats counts the groups of set as they are written, in the memory
// the set's read takes (from a grouping view: its batches), with rawURLs
// and resolvedURLs the database's distinct raw and resolved URLs
// (DistinctURLs). set must list every group: read with MinSize 1 and no
// Verdict. The counts equal ComputeStats' on the same database.
func StreamStats(ctx context.Context, set *GroupSet, rawURLs, resolvedURLs int) (*Stats, error) {
	c := NewStatsCounter(set.Policy())
	rep, err := set.Write(ctx, func(buf []byte, g *Group) []byte {
		c.Group(g)
		return buf
	}, func([]byte) error { return nil })
	if err != nil {
		return nil, err
	}
	return c.Stats(rep.Counts["citations"], rawURLs, resolvedURLs, rep), nil
}
