package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/query"
)

// Explain writes the items behind a count (stats --explain what) in the
// table format: a header naming what and the policy, then each item with
// its group and citations.
func Explain(w io.Writer, what string, pol query.PolicyRef, lines []query.ExplainLine) error {
	return ExplainEach(w, what, pol, len(lines), eachLine(lines))
}

// ExplainEach is Explain for n lines that each hands over one at a time
// (query.LineSpool.Each): the lines need not all be held.
func ExplainEach(w io.Writer, what string, pol query.PolicyRef, n int, each func(func(query.ExplainLine) error) error) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s under policy %s: %d\n", EscapeText(what), EscapeText(pol.String()), n)
	err := each(func(l query.ExplainLine) error {
		g := ""
		if l.Group != "" {
			g = EscapeText(l.Group) + "  "
		}
		_, err := fmt.Fprintf(bw, "%s%s\n    %s\n", g, QuoteIfNeeded(l.Item), strings.Join(EscapeAll(l.Members), " "))
		return err
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// ExplainJSON writes the lines each hands over as JSON writes a slice of
// them, without holding them.
func ExplainJSON(w io.Writer, each func(func(query.ExplainLine) error) error) error {
	bw := bufio.NewWriter(w)
	var elem bytes.Buffer
	enc := json.NewEncoder(&elem)
	enc.SetEscapeHTML(false)
	enc.SetIndent("  ", "  ")
	n := 0
	err := each(func(l query.ExplainLine) error {
		elem.Reset()
		if err := enc.Encode(l); err != nil {
			return err
		}
		sep := ",\n  "
		if n == 0 {
			sep = "[\n  "
		}
		n++
		bw.WriteString(sep)
		_, err := bw.Write(bytes.TrimSuffix(elem.Bytes(), []byte("\n")))
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		bw.WriteString("[]\n")
	} else {
		bw.WriteString("\n]\n")
	}
	return bw.Flush()
}

// eachLine hands over lines one at a time.
func eachLine(lines []query.ExplainLine) func(func(query.ExplainLine) error) error {
	return func(fn func(query.ExplainLine) error) error {
		for _, l := range lines {
			if err := fn(l); err != nil {
				return err
			}
		}
		return nil
	}
}

// StatsTable writes the counts of stats in the table format, each
// deduplicated count with the --explain that lists what is behind it.
func StatsTable(w io.Writer, s *query.Stats) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(policyHeader(s.Policy))
	row := func(name string, n int, explain string) {
		if explain != "" {
			explain = "  (--explain " + explain + ")"
		}
		fmt.Fprintf(bw, "%-28s %8d%s\n", name, n, explain)
	}
	row("citations", s.Citations, "")
	row("distinct raw URLs", s.DistinctRawURLs, "raw-urls")
	row("distinct resolved URLs", s.DistinctResolvedURLs, "resolved-urls")
	row("distinct keys", s.DistinctKeys, "keys")
	row("review groups", s.Groups, "groups")
	row("  with several members", s.GroupsWithSeveral, "")
	for _, v := range sortedKeys(s.GroupsByVerdict) {
		row("  "+EscapeText(v), s.GroupsByVerdict[v], "verdict:"+EscapeText(v))
	}
	for _, e := range sortedKeys(s.GroupsByConfirmation) {
		row("    confirmed by "+EscapeText(e), s.GroupsByConfirmation[e], "confirmed:"+EscapeText(e))
	}
	row("relations between groups", sum(s.RelationsByType), "")
	for _, t := range sortedKeys(s.RelationsByType) {
		row("  "+EscapeText(t), s.RelationsByType[t], "relation:"+EscapeText(t))
	}
	row("rejected raw URLs", s.Rejected, "rejected")
	row("not normalized under policy", s.Unnormalized, "")
	row("incomplete runs", len(s.IncompleteRuns), "")
	fmt.Fprintf(bw, "\nownership by registrable domain (not a URL count):\n")
	for _, d := range s.Domains {
		fmt.Fprintf(bw, "  %-40s %6d citations %6d keys %6d groups\n", EscapeText(d.Domain), d.Citations, d.Keys, d.Groups)
	}
	return bw.Flush()
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// RecordCounts writes what a server answering in bounded memory counts
// from the group records (serve --bounded): the groups, the queued ones
// and the groups by verdict, with where the other counts are.
func RecordCounts(w io.Writer, pol query.PolicyRef, groups, queued int, byVerdict map[string]int) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(policyHeader(pol))
	row := func(name string, n int) { fmt.Fprintf(bw, "%-28s %8d\n", name, n) }
	row("review groups", groups)
	row("  in the review queue", queued)
	for _, v := range sortedKeys(byVerdict) {
		row("  "+EscapeText(v), byVerdict[v])
	}
	fmt.Fprintf(bw, "\nThe server answers in bounded memory, from the group records: the\ncounts of citations, URLs, relations and domains need a whole reading of\nthe database (provgraph stats, once the server is stopped).\n")
	return bw.Flush()
}
