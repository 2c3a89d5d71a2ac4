package main

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
)

type groupsOptions struct {
	dbOptions
	policy    string
	format    string
	minSize   int
	verdict   string
	maxShared int
	review    bool
	redact    bool
}

// verdicts are the verdicts' names, in the codebook's order.
var verdicts = func() []string {
	var names []string
	for _, v := range model.Verdicts {
		names = append(names, v.Name)
	}
	return names
}()

// verdictHelp lists the codebook for the help: each verdict's name and its
// short definition.
func verdictHelp() string {
	var b strings.Builder
	for _, v := range model.Verdicts {
		for i, line := range v.Short {
			name := ""
			if i == 0 {
				name = v.Name
			}
			fmt.Fprintf(&b, "  %-21s%s\n", name, line)
		}
	}
	return b.String()
}

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
` + verdictHelp() + `
Cross-host redirects, canonical declarations, format variants, mirrors,
syndicated copies, archive snapshots and shared content hashes never join
groups: they are listed as relations between groups, and the cross-host ones
are flagged for review. A redirect target or content hash shared by more
than --max-shared groups (a login wall, a home page, an error page) is not
duplicate evidence. Raw URLs the policy rejected are listed apart.

Groups of at least --min-size members are listed, and smaller ones that are
the source or target of a relation flagged for review (an AMP page and its
origin, each cited once), unless --review-relations=false.

Formats: table (default), json (policy, groups, rejected, counts,
incomplete_runs), csv (one row per member). Table and CSV show a value that
holds a control or bidirectional formatting character as a quoted Go string
("a\x1b[2K"); JSON holds the values unescaped.

An ingest or resolve run that never completed is named on standard error
(and in JSON, incomplete_runs): the groups may miss what it did not write.
An empty database gives no group and zero counts.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, or no such policy in the database",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
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
	f.StringVar(&o.policy, "policy", "", "the policy whose keys to group by: NAME@VERSION, NAME or a digest (default: the policy used by the latest ingest or renormalize run)")
	f.StringVar(&o.format, "format", "table", "output format: table, json or csv")
	f.IntVar(&o.minSize, "min-size", 2, "list only groups with at least this many members, and smaller ones that take part in a relation that needs review (see --review-relations)")
	f.BoolVar(&o.review, "review-relations", true, "also list the groups smaller than --min-size that are the source or target of a relation marked for review; false lists by size only")
	f.StringVar(&o.verdict, "verdict", "", "list only groups with this verdict: "+strings.Join(verdicts, ", "))
	f.IntVar(&o.maxShared, "max-shared", model.DefaultMaxShared, "a redirect target or content hash shared by more groups than this is not duplicate evidence")
	addRedactFlag(cmd, &o.redact)
	return cmd
}

func runGroups(cmd *cobra.Command, o groupsOptions) error {
	if o.format != "table" && o.format != "json" && o.format != "csv" {
		return usagef("--format %q: want table, json or csv", o.format)
	}
	if o.verdict != "" && !slices.Contains(verdicts, o.verdict) {
		return usagef("--verdict %q: want one of %s", o.verdict, strings.Join(verdicts, ", "))
	}
	st, err := o.open(true)
	if err != nil {
		return err
	}
	defer st.Close()
	tuneGCForQueries()
	set, err := query.LoadGroups(cmd.Context(), st, o.policy, query.GroupOptions{MaxShared: o.maxShared, MinSize: o.minSize, Verdict: o.verdict, Review: o.review})
	if err != nil {
		return loadError(err)
	}
	warnings := redactIf(o.redact, set.Warnings())
	for _, w := range warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", escapeLine(w))
	}
	var groups groupWriter = func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error) {
		return set.Write(cmd.Context(), encode, write)
	}
	if o.redact {
		groups = redactGroups(groups)
	}
	return writeGroups(cmd.OutOrStdout(), o.format, redactIf(o.redact, set.Policy()), warnings, groups)
}

// redactGroups writes the groups of gw and the rest of its report with
// their URLs' userinfo redacted (--redact-userinfo).
func redactGroups(gw groupWriter) groupWriter {
	return func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error) {
		rest, err := gw(func(b []byte, g *query.Group) []byte { return encode(b, redacted(g)) }, write)
		return redacted(rest), err
	}
}

// load opens the database read-only and loads a snapshot under policy.
func (o *dbOptions) load(cmd *cobra.Command, policy string) (*query.Snapshot, error) {
	st, err := o.open(true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	tuneGCForQueries()
	snap, err := query.Load(cmd.Context(), st, policy)
	if err != nil {
		return nil, loadError(err)
	}
	return snap, nil
}

// loadError classifies an error of loading a database: only a policy the
// database does not hold is the user's to fix (exit status 2); a damaged
// database or a failed read keeps its own status (5 or 3).
func loadError(err error) error {
	if errors.Is(err, query.ErrNoPolicy) {
		return usageError{err}
	}
	return err
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// groupWriter writes the listed groups through encode and write (as
// query.GroupSet.Write does) and returns the rest of the report.
type groupWriter func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error)

// reportGroups writes the groups of a whole report, for writeGroups.
func reportGroups(rep *query.Report) groupWriter {
	return func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error) {
		var buf []byte
		for _, g := range rep.Groups {
			buf = encode(buf[:0], g)
			if err := write(buf); err != nil {
				return nil, err
			}
		}
		rest := *rep
		rest.Groups = nil
		return &rest, nil
	}
}

// writeGroups writes a groups report in format (table, json or csv): the
// head, the groups as groups writes them, then what follows them (rejected
// citations and counts), so that the groups of a million citations are
// never all in memory at once.
func writeGroups(w io.Writer, format string, pol query.PolicyRef, warnings []string, groups groupWriter) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	write := func(p []byte) error {
		_, err := bw.Write(p)
		return err
	}
	var rest *query.Report
	var err error
	switch format {
	case "json":
		// The groups are written as ",\n    {...}"; the first comma is
		// dropped. This is byte for byte what encoding/json writes for the
		// whole report with a two-space indent.
		bw.WriteString("{\n  \"policy\": ")
		bw.Write(jsonValue(pol, "  "))
		bw.WriteString(",\n  \"groups\": [")
		first := true
		rest, err = groups(func(buf []byte, g *query.Group) []byte {
			return appendGroupJSON(append(buf, ",\n    "...), g, "    ")
		}, func(p []byte) error {
			if first {
				p, first = p[1:], false
			}
			return write(p)
		})
		if err != nil {
			return err
		}
		if !first {
			bw.WriteString("\n  ")
		}
		bw.WriteString("],\n  \"rejected\": ")
		bw.Write(jsonValue(rest.Rejected, "  "))
		bw.WriteString(",\n  \"unnormalized\": ")
		bw.Write(jsonValue(rest.Missing, "  "))
		bw.WriteString(",\n  \"counts\": ")
		bw.Write(jsonValue(rest.Counts, "  "))
		bw.WriteString(",\n  \"incomplete_runs\": ")
		bw.Write(jsonValue(rest.IncompleteRuns, "  "))
		if len(warnings) > 0 {
			bw.WriteString(",\n  \"warnings\": ")
			bw.Write(jsonValue(warnings, "  "))
		}
		bw.WriteString("\n}\n")
	case "csv":
		bw.WriteString("group_id,verdict,group_key,citation_id,raw_url,fragment,resolved_url,key,reasons\n")
		if _, err = groups(groupCSV, write); err != nil {
			return err
		}
	default:
		bw.WriteString(policyHeader(pol))
		if rest, err = groups(groupTable, write); err != nil {
			return err
		}
		if len(rest.Rejected) > 0 {
			fmt.Fprintf(bw, "\nrejected by the policy (never grouped):\n")
			for _, r := range rest.Rejected {
				fmt.Fprintf(bw, "  %s  %s  %s\n", escapeText(r.CitationID), quoteIfNeeded(r.RawURL), escapeText(r.Code))
			}
		}
		keys := make([]string, 0, len(rest.Counts))
		for k := range rest.Counts {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		fmt.Fprintln(bw)
		for _, k := range keys {
			fmt.Fprintf(bw, "# %s: %d\n", escapeText(k), rest.Counts[k])
		}
	}
	return bw.Flush()
}

// policyHeader is the first line of a table: the policy, or that an
// empty database holds none.
func policyHeader(p query.PolicyRef) string {
	if p.Digest == "" {
		return "# policy: none (the database holds no normalization policy)\n"
	}
	return fmt.Sprintf("# policy %s %s\n", escapeText(p.String()), escapeText(p.Digest))
}

// jsonValue encodes v as encoding/json does with a two-space indent under
// prefix, without the final newline.
func jsonValue(v any, prefix string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		panic(err) // plain data
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// groupTable appends one group in the table format. Every value is
// escaped (escapeText, quoteIfNeeded; escapeLine for the reasons and
// evidence, which are sentences).
func groupTable(b []byte, g *query.Group) []byte {
	b = append(append(append(append(b, '\n'), escapeText(g.ID)...), "  "...), escapeText(g.Verdict)...)
	b = append(strconv.AppendInt(append(b, "  "...), int64(len(g.Members)), 10), " member"...)
	if len(g.Members) != 1 {
		b = append(b, 's')
	}
	b = append(append(append(b, "  "...), quoteIfNeeded(g.Key)...), '\n')
	for _, m := range g.Members {
		b = append(append(append(append(b, "  "...), escapeText(m.CitationID)...), "  "...), quoteIfNeeded(m.RawURL)...)
		if m.Fragment != nil {
			b = append(strconv.AppendQuote(append(b, "  (fragment "...), *m.Fragment), " kept as evidence)"...)
		}
		if m.ResolvedURL != "" {
			b = append(append(b, "  resolved "...), quoteIfNeeded(m.ResolvedURL)...)
		}
		b = append(b, '\n')
		for _, r := range m.Reasons {
			b = append(append(append(b, "      "...), escapeLine(r)...), '\n')
		}
	}
	for _, r := range g.Relations {
		to := escapeText(r.To)
		if r.To == "" {
			to = quoteIfNeeded(r.ToURL) + " (not cited)"
		}
		b = append(append(append(append(b, "  "...), escapeText(r.Type)...), " -> "...), to...)
		if r.Review {
			b = append(b, " [review]"...)
		}
		b = append(append(append(b, "\n      "...), escapeLine(r.Evidence)...), '\n')
	}
	return b
}

// groupCSV appends one row per member of a group. A field that holds a
// control or bidirectional formatting character is written as escapeText
// writes it (a double-quoted Go string), so that a CSV file shown in a
// terminal cannot rewrite it; --format json has the exact values.
func groupCSV(b []byte, g *query.Group) []byte {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	for _, m := range g.Members {
		frag := ""
		if m.Fragment != nil {
			frag = *m.Fragment
		}
		cw.Write(escapeAll([]string{g.ID, g.Verdict, g.Key, m.CitationID, m.RawURL, frag, m.ResolvedURL, m.Key, strings.Join(m.Reasons, "; ")}))
	}
	cw.Flush()
	return append(b, buf.Bytes()...)
}

// writeReportJSON writes a whole report as writeJSON would, a group at a
// time.
func writeReportJSON(w io.Writer, rep *query.Report) error {
	return writeGroups(w, "json", rep.Policy, rep.Warnings, reportGroups(rep))
}
