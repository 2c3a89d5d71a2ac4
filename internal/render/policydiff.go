package render

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/provgraph/provgraph/internal/query"
)

// PolicyDiff writes the groups that merge or split between two policies
// (policy-diff) in the table format: a header naming both policies and the
// counts, each change with its parts, citations and rules, then how the
// policies differ.
func PolicyDiff(w io.Writer, d *query.PolicyDiff) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# A %s %s\n# B %s %s\n# %s under A, %d under B; %s, %s\n",
		EscapeText(d.A.String()), EscapeText(d.A.Digest), EscapeText(d.B.String()), EscapeText(d.B.Digest), Plural(d.Counts["groups_a"], "group"), d.Counts["groups_b"], Plural(d.Counts["merge"], "merge"), Plural(d.Counts["split"], "split"))
	for _, c := range d.Changes {
		fmt.Fprintf(bw, "\n%s %s %s\n", EscapeText(c.Kind), EscapeText(c.Group.ID), QuoteIfNeeded(c.Group.Key))
		for _, p := range c.Parts {
			fmt.Fprintf(bw, "  part %s %s\n", EscapeText(p.ID), QuoteIfNeeded(p.Key))
		}
		fmt.Fprintf(bw, "  citations: %s\n  rules: %s\n", strings.Join(EscapeAll(c.Citations), " "), strings.Join(EscapeAll(c.Rules), ", "))
	}
	if len(d.Rules) > 0 {
		fmt.Fprintf(bw, "\npolicy differences:\n")
		for _, r := range d.Rules {
			fmt.Fprintf(bw, "  %s\n", EscapeLine(r))
		}
	}
	return bw.Flush()
}
