package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
)

type statsOptions struct {
	dbOptions
	policy    string
	format    string
	explain   string
	maxShared int
	redact    bool
	workMem   string
	read      string
	tmp       string
}

// statsBytesPerCitation is what stats --explain holds per citation: it
// loads every citation whole, then groups them (3.10 GB of peak RSS at a
// million citations, 3.49 GB with review decisions, whose listing it also
// held before the counts were streamed).
const statsBytesPerCitation = 3500

func newStatsCommand() *cobra.Command {
	var o statsOptions
	cmd := &cobra.Command{
		Use:   "stats [flags]",
		Short: "Count citations, URLs, keys, groups and relations, each explainable",
		Long: `Stats counts the database without changing it: citations, distinct raw URLs,
distinct resolved URLs, distinct comparison keys, review groups by verdict,
relations by type and rejected URLs, and, reported apart from the URL counts,
ownership by registrable domain (public suffix list). Ingest and resolve
runs that never completed are counted, named on standard error and listed
in JSON (incomplete_runs); an empty database gives zero counts. The table
shows a value that holds a control or bidirectional formatting character as
a quoted Go string ("a\x1b[2K"); JSON holds the values unescaped.

Every deduplicated count can be explained: --explain lists what is behind it.
  --explain groups          each group with its key and citations
  --explain keys            each distinct key with its citations
  --explain raw-urls        each distinct raw URL with its citations
  --explain resolved-urls   each distinct resolved URL with its citations
  --explain rejected        each rejected raw URL
  --explain domain:D        the groups of registrable domain D
  --explain verdict:V       the groups with verdict V
  --explain confirmed:E     the identity-confirmed groups that evidence E confirmed:
                            content-hash, text-digest or near-text
  --explain relation:T      the groups with a relation of type T
  --explain review-state:S  the groups in review state S (unreviewed,
                            decided, stale), each with its latest decision

Memory: the counts are made as the groups are written, as groups writes
them: from the grouping view a batch of keys at a time (memory bounded by
the batch and --work-mem, whatever the size of the database), with one
more lean pass over the citations' raw and final URLs that keeps a bit
per distinct value. --read says how, as for groups: auto (the default)
reads the view, or scans when the citations fit in --work-mem; without a
usable view, past --work-mem it exits 2 naming 'provgraph view rebuild'.
--explain groups, domain:D, verdict:V, confirmed:E, relation:T, rejected
and review-state:S read the groups as the counts do (--read), keeping only
the lines they print: the same lines as a scan of every citation (tested).
--explain keys, raw-urls and resolved-urls read the grouping view's rows
instead, each with what a listed group shows of its citation, and sort
the values on disk (an eighth of --work-mem, at most 128 MiB, of memory):
bounded memory, the same lines (tested); a view made before format 7 (no
member records) cannot, and --read view then exits 2 naming 'provgraph
view rebuild'. Every explanation's lines go to a file in --tmp as they are
found, read back to be printed (files unlinked as made). Any with --read
scan, and those without a usable view, load every citation whole, about
3.5 KB each (3.1 GB of peak RSS at a million citations): they count the
citations first and exit 2 when they would take more than the working
memory, --work-mem (default $PROVGRAPH_WORK_MEM, else three quarters of
the machine's or cgroup's memory), rather than be killed for lack of
memory minutes later.

When the database holds review decisions (provgraph review), stats adds
their counts, over the groups groups lists by default: unreviewed, decided
and stale groups, groups by latest decision, splits (groups decided
different: their members are not one source), the citations of groups
decided same (confirmed duplicates) and of unreviewed groups. JSON has them
under "reviews".

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag or --explain, or no such policy in the database",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph stats --db example.db
  provgraph stats --db example.db --explain keys
  provgraph stats --db example.db --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStats(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "", "the policy to count under: NAME@VERSION, NAME or a digest (default: the policy used by the latest ingest or renormalize run)")
	f.StringVar(&o.format, "format", "table", "output format: table or json")
	f.StringVar(&o.explain, "explain", "", "list what is behind a count (see above)")
	f.IntVar(&o.maxShared, "max-shared", model.DefaultMaxShared, "as for groups")
	addRedactFlag(cmd, &o.redact)
	f.StringVar(&o.workMem, "work-mem", "", "the memory stats may take, e.g. 8GiB: the view's reads keep half of it mapped, a scan and --explain refuse more citations than it holds (default $PROVGRAPH_WORK_MEM, else three quarters of the machine's or cgroup's memory)")
	f.StringVar(&o.tmp, "tmp", "", tmpUsage+", for --explain's lines and the sort of keys, raw-urls and resolved-urls")
	f.StringVar(&o.read, "read", "auto", "how the counts read the groups, as for groups: scan (every citation at once), view (the grouping view a batch of keys at a time: bounded memory) or auto (the view unless the citations fit in --work-mem)")
	return cmd
}

// statsFits refuses a database whose citations stats --explain would hold
// in more than the working memory.
func statsFits(cmd *cobra.Command, o statsOptions) error {
	return fitsWorkMem(cmd, o.service(), o.db, o.workMem, statsBytesPerCitation,
		"stats --explain holds every citation whole", "stats without --explain and groups --id or --key answer in bounded memory")
}

// fitsWorkMem refuses (a usage error) a database whose citations a command
// would hold in more than the working memory, at perCitation bytes each:
// --work-mem (flag; $PROVGRAPH_WORK_MEM when empty), else three quarters
// of the machine's memory. It counts the citations without loading them
// (service.DB.CitationCount). what says what the command holds, instead
// what answers in bounded memory.
func fitsWorkMem(cmd *cobra.Command, db service.DB, path, flag string, perCitation int64, what, instead string) error {
	workMem, err := workMemFlag(flag)
	if err != nil {
		return err
	}
	room := workMem
	if room <= 0 {
		room = memoryLimit() / 4 * 3
	}
	if room <= 0 {
		return nil
	}
	n, err := db.CitationCount(cmd.Context())
	if err != nil {
		return err
	}
	if need := n * perCitation; need > room {
		return usagef("%s, about %d bytes a citation: the %d citations of %s would take about %s, more than the working memory (%s: --work-mem, or three quarters of the machine's memory). A larger --work-mem runs it anyway; %s",
			what, perCitation, n, path, formatBytes(need), formatBytes(room), instead)
	}
	return nil
}

func runStats(cmd *cobra.Command, o statsOptions) error {
	if o.format != "table" && o.format != "json" {
		return usagef("--format %q: want table or json", o.format)
	}
	workMem, err := workMemFlag(o.workMem)
	if err != nil {
		return err
	}
	how, err := groupsRead(o.read, workMem)
	if err != nil {
		return err
	}
	if _, byValue := query.ExplainsValues(o.explain); byValue && how.View {
		done, err := explainFromView(cmd, o, how, workMem)
		if done || err != nil {
			return err
		}
		if o.read == "view" {
			return usagef("stats --explain %s --read view: the database keeps no grouping view of the policy whose rows carry member records (a view made before format 7 has none); provgraph view rebuild --db %s writes one, or --read scan loads every citation", o.explain, o.db)
		}
	}
	_, reviewState := strings.CutPrefix(o.explain, "review-state:")
	if _, listsGroups, _ := query.GroupExplainer(o.explain); o.explain != "" && (!listsGroups && o.explain != "rejected" && !reviewState || o.read == "scan") {
		// The explanations that list groups read them as groups does
		// (--read), keeping only the lines; the others hold every
		// citation.
		if err := statsFits(cmd, o); err != nil {
			return err
		}
	}
	tuneGCForQueries()
	if state, ok := strings.CutPrefix(o.explain, "review-state:"); ok {
		sp, err := o.service().ExplainReviewState(cmd.Context(), o.policy, o.maxShared, state, how, o.tmp)
		if err != nil {
			return err
		}
		return writeExplained(cmd, o, sp)
	}
	res, err := o.service().Stats(cmd.Context(), service.StatsRequest{Policy: o.policy, MaxShared: o.maxShared, Explain: o.explain, Read: how, Tmp: o.tmp})
	if err != nil {
		return err
	}
	if res.Lines != nil {
		res.Lines.Policy, res.Lines.Warnings = res.Policy, res.Warnings
		return writeExplained(cmd, o, res.Lines)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	out := cmd.OutOrStdout()
	s := render.RedactIf(o.redact, res.Stats)
	has, err := o.service().HasDecisions(cmd.Context())
	if err != nil {
		return err
	}
	if !has {
		if o.format == "json" {
			return render.JSON(out, s)
		}
		return render.StatsTable(out, s)
	}
	// The review counts are over the groups review lists (two members or
	// more, or in a relation to review), counted as they are found.
	r, err := o.service().ReviewedFrom(cmd.Context(), o.policy, query.GroupOptions{MaxShared: o.maxShared, MinSize: 2, Review: true}, how)
	if err != nil {
		return err
	}
	defer r.Close()
	counts, err := r.Counts(cmd.Context())
	if err != nil {
		return err
	}
	if o.format == "json" {
		return render.JSON(out, struct {
			*query.Stats
			Reviews *review.Counts `json:"reviews"`
		}{s, counts})
	}
	if err := render.StatsTable(out, s); err != nil {
		return err
	}
	return render.ReviewCounts(out, counts)
}

// formatBytes writes n bytes in GiB (one decimal) from 1 GiB, else in MiB
// or KiB.
func formatBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
}

// explainFromView writes an explanation by value (keys, raw-urls,
// resolved-urls) read from the grouping view and sorted on disk
// (service.DB.ExplainFromView), and says whether it did: not when the
// database keeps no view of the policy whose rows carry member records.
func explainFromView(cmd *cobra.Command, o statsOptions, how service.GroupsRead, workMem int64) (bool, error) {
	sp, err := o.service().ExplainFromView(cmd.Context(), o.policy, o.explain, how, query.DiskSort{Dir: o.tmp, Mem: diskSortMem(workMem)})
	if err != nil || sp == nil {
		return false, err
	}
	return true, writeExplained(cmd, o, sp)
}

// writeExplained writes the lines of an explanation, read back from their
// spool (then closed), with its warnings on standard error.
func writeExplained(cmd *cobra.Command, o statsOptions, sp *query.LineSpool) error {
	defer sp.Close()
	for _, w := range sp.Warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", w)
	}
	each := func(fn func(query.ExplainLine) error) error {
		return sp.Each(func(l query.ExplainLine) error { return fn(render.RedactIf(o.redact, l)) })
	}
	if o.format == "json" {
		return render.ExplainJSON(cmd.OutOrStdout(), each)
	}
	return render.ExplainEach(cmd.OutOrStdout(), o.explain, sp.Policy, sp.Len(), each)
}
