package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/query"
)

type groupsOptions struct {
	dbOptions
	policy    string
	format    string
	minSize   int
	verdict   string
	maxShared int
}

var verdicts = []string{query.VerdictIdentityConfirmed, query.VerdictNormalizedCompare, query.VerdictNeedsContentCheck, query.VerdictConflict}

func newGroupsCommand() *cobra.Command {
	var o groupsOptions
	cmd := &cobra.Command{
		Use:   "groups [flags]",
		Short: "List the review groups: citations that are probably the same, and why",
		Long: `Groups derives review groups from the database without changing it: the
citations whose comparison keys are equal under the policy, joined by
same-host redirects to a common target. Every member keeps its own raw URL,
fragment, resolved URL and key, with the reasons it is in the group.

Verdicts (how strong the reason to review together is; never proof):
  identity-confirmed   every member has a content hash and they agree
  normalized-compare   keys equal by syntax rules and tracking removal only
  needs-content-check  equality relied on a server-defined host rule or a
                       redirect, and no content hash confirms it
  conflict             members' content hashes disagree

Cross-host redirects, canonical declarations, format variants, mirrors,
syndicated copies, archive snapshots and shared content hashes never join
groups: they are listed as relations between groups, and the cross-host ones
are flagged for review. A redirect target or content hash shared by more
than --max-shared groups (a login wall, a home page, an error page) is not
duplicate evidence. Raw URLs the policy rejected are listed apart.

Formats: table (default), json (policy, groups, rejected, counts), csv (one
row per member).

` + exitStatusHelp,
		Example: `  provgraph groups --db example.db
  provgraph groups --db example.db --format json --min-size 1
  provgraph groups --db example.db --verdict conflict --format csv`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroups(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "", "the policy whose keys to group by: NAME@VERSION, NAME or a digest (default: the policy of the latest ingest run)")
	f.StringVar(&o.format, "format", "table", "output format: table, json or csv")
	f.IntVar(&o.minSize, "min-size", 2, "list only groups with at least this many members")
	f.StringVar(&o.verdict, "verdict", "", "list only groups with this verdict: "+strings.Join(verdicts, ", "))
	f.IntVar(&o.maxShared, "max-shared", query.DefaultMaxShared, "a redirect target or content hash shared by more groups than this is not duplicate evidence")
	return cmd
}

func runGroups(cmd *cobra.Command, o groupsOptions) error {
	if o.format != "table" && o.format != "json" && o.format != "csv" {
		return usagef("--format %q: want table, json or csv", o.format)
	}
	if o.verdict != "" && !slices.Contains(verdicts, o.verdict) {
		return usagef("--verdict %q: want one of %s", o.verdict, strings.Join(verdicts, ", "))
	}
	snap, err := o.load(cmd, o.policy)
	if err != nil {
		return err
	}
	rep := query.Groups(snap, query.GroupOptions{MaxShared: o.maxShared})
	for _, w := range rep.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	shown := rep.Groups[:0:0]
	for _, g := range rep.Groups {
		if len(g.Members) >= o.minSize && (o.verdict == "" || g.Verdict == o.verdict) {
			shown = append(shown, g)
		}
	}
	full := *rep
	full.Groups = shown
	out := cmd.OutOrStdout()
	switch o.format {
	case "json":
		return writeReportJSON(out, &full)
	case "csv":
		return groupsCSV(out, &full)
	}
	return groupsTable(out, &full)
}

// load opens the database read-only and loads a snapshot under policy.
func (o *dbOptions) load(cmd *cobra.Command, policy string) (*query.Snapshot, error) {
	st, err := o.open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	snap, err := query.Load(cmd.Context(), st, policy)
	if err != nil {
		return nil, usageError{err}
	}
	return snap, nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func groupsTable(w io.Writer, rep *query.Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# policy %s %s\n", rep.Policy, rep.Policy.Digest)
	for _, g := range rep.Groups {
		fmt.Fprintf(bw, "\n%s  %s  %d members  %s\n", g.ID, g.Verdict, len(g.Members), g.Key)
		for _, m := range g.Members {
			fmt.Fprintf(bw, "  %s  %s", m.CitationID, quoteIfNeeded(m.RawURL))
			if m.Fragment != nil {
				fmt.Fprintf(bw, "  (fragment %q kept as evidence)", *m.Fragment)
			}
			if m.ResolvedURL != "" {
				fmt.Fprintf(bw, "  resolved %s", m.ResolvedURL)
			}
			fmt.Fprintln(bw)
			for _, r := range m.Reasons {
				fmt.Fprintf(bw, "      %s\n", r)
			}
		}
		for _, r := range g.Relations {
			to := r.To
			if to == "" {
				to = r.ToURL + " (not cited)"
			}
			flag := ""
			if r.Review {
				flag = " [review]"
			}
			fmt.Fprintf(bw, "  %s -> %s%s\n      %s\n", r.Type, to, flag, r.Evidence)
		}
	}
	if len(rep.Rejected) > 0 {
		fmt.Fprintf(bw, "\nrejected by the policy (never grouped):\n")
		for _, r := range rep.Rejected {
			fmt.Fprintf(bw, "  %s  %s  %s\n", r.CitationID, quoteIfNeeded(r.RawURL), r.Code)
		}
	}
	keys := make([]string, 0, len(rep.Counts))
	for k := range rep.Counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintln(bw)
	for _, k := range keys {
		fmt.Fprintf(bw, "# %s: %d\n", k, rep.Counts[k])
	}
	return bw.Flush()
}

func groupsCSV(w io.Writer, rep *query.Report) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"group_id", "verdict", "group_key", "citation_id", "raw_url", "fragment", "resolved_url", "key", "reasons"})
	for _, g := range rep.Groups {
		for _, m := range g.Members {
			frag := ""
			if m.Fragment != nil {
				frag = *m.Fragment
			}
			cw.Write([]string{g.ID, g.Verdict, g.Key, m.CitationID, m.RawURL, frag, m.ResolvedURL, m.Key, strings.Join(m.Reasons, "; ")})
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeReportJSON writes rep as writeJSON would, one group at a time, so
// that the output of a million citations is never whole in memory.
func writeReportJSON(w io.Writer, rep *query.Report) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf bytes.Buffer
	value := func(v any, indent string) {
		buf.Reset()
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent(indent, "  ")
		if err := enc.Encode(v); err != nil {
			panic(err) // plain data
		}
		bw.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
	bw.WriteString("{\n  \"policy\": ")
	value(rep.Policy, "  ")
	bw.WriteString(",\n  \"groups\": ")
	switch {
	case rep.Groups == nil:
		bw.WriteString("null")
	case len(rep.Groups) == 0:
		bw.WriteString("[]")
	default:
		bw.WriteString("[\n")
		for i, g := range rep.Groups {
			bw.WriteString("    ")
			value(g, "    ")
			if i < len(rep.Groups)-1 {
				bw.WriteString(",")
			}
			bw.WriteString("\n")
		}
		bw.WriteString("  ]")
	}
	bw.WriteString(",\n  \"rejected\": ")
	value(rep.Rejected, "  ")
	bw.WriteString(",\n  \"unnormalized\": ")
	value(rep.Missing, "  ")
	bw.WriteString(",\n  \"counts\": ")
	value(rep.Counts, "  ")
	if len(rep.Warnings) > 0 {
		bw.WriteString(",\n  \"warnings\": ")
		value(rep.Warnings, "  ")
	}
	bw.WriteString("\n}\n")
	return bw.Flush()
}
