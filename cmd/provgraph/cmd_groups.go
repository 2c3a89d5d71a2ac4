package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
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
	filter    service.GroupFilter
	workMem   string
	read      string
}

// groupsBytesPerCitation is about what `groups` holds per citation when
// it loads every citation (400 bytes at a million, 280 at ten million:
// README, Performance): --read auto reads from the grouping view when the
// citations would take more than the working memory.
const groupsBytesPerCitation = 400

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
Content evidence counts only from successful retrievals (2xx, and not an
error, soft-404, login or empty page by the extractor's soft-error class).
Cross-host redirects, canonical declarations, format variants, mirrors,
syndicated copies, archive snapshots, shared content hashes and shared
main texts (same-text: an equal text digest or SimHashes within the
threshold) never join groups: they are listed as relations between groups,
and the cross-host and same-text ones are flagged for review. A redirect
target or content hash shared by more than --max-shared groups (a login
wall, a home page, an error page) is not duplicate evidence. Raw URLs the
policy rejected are listed apart.

Groups of at least --min-size members are listed, and smaller ones that are
the source or target of a relation flagged for review (an AMP page and its
origin, each cited once), unless --review-relations=false.

Formats: table (default), json (policy, groups, rejected, counts,
incomplete_runs), csv (one row per member). A member whose citation has
cited_text and a successful extraction carries a passage check (json:
passage {found, score, method, span, extractor}; table: "cited passage").
Table and CSV show a value that holds a control or bidirectional
formatting character as a quoted Go string ("a\x1b[2K"); JSON holds the
values unescaped.

An ingest or resolve run that never completed is named on standard error
(and in JSON, incomplete_runs): the groups may miss what it did not write.
An empty database gives no group and zero counts.

Memory: a scan (--read scan, or auto when the citations fit in --work-mem)
holds about 400 bytes a citation while it groups at a million citations
(400 MB of heap), 280 at ten million (2.8 GB), and keeps at most 128 MiB
of the database file mapped while it reads it; reading the view holds the
batches in hand (below, --read). The garbage
collector runs at a target of 100, and of 25 once a collection finds more
than 1 GiB live, so that a large heap stays within a quarter above what is
held (GOGC, when set, is used instead).
--work-mem (default $PROVGRAPH_WORK_MEM, the variable ingest's --work-mem
reads) is the heap's soft limit: the garbage collector runs more often to
stay under it, so a limit near what is held costs CPU time; it is also
the working memory --read auto and view keep to (a scan that would hold
more is refused, with what to do instead).

Reading (--read): "scan" loads every citation's grouping facts at once,
which holds about 280 to 400 bytes a citation (3.4 GiB at 10 million
citations, 10 GiB at 30 million). "view" reads the database's grouping
view of the policy (kept by ingest, made by provgraph view rebuild) in key
order, a batch of keys at a time with what their groups depend on, so
that memory is bounded by the batch whatever the size of the database.
A view made by this provgraph keeps each member's record in its row (view
status says whether it does), and is read faster than a scan once
compacted (provgraph view compact; at 10 million citations 40-47 s and
1.3 GiB against the scan's 96 s and 3.5 GiB; 74-77 s before compacting);
a view made before (file format 6 or earlier) has each listed member read
on its own, several times slower, until provgraph view rebuild. "auto" (the
default) reads the view when it keeps member records, or when the
citations would take more than --work-mem at 400 bytes each (three
quarters of the machine's memory when --work-mem is not set). Reading the
view, it holds a few hundred MB of heap and keeps half of --work-mem of
the database file mapped (256 MiB at least; 1 GiB when --work-mem is not
set): more --work-mem makes it faster on a file larger than that. Without
a usable view (none, as after an RDF load, or one made by another
normalization engine), auto scans only when the citations fit in
--work-mem, and view never: groups then exits 2 and names the command
that writes the view once in bounded memory (provgraph view rebuild) and
--read scan, which groups in memory whatever it takes; --engine and
--since, which the view cannot answer, likewise.
The output is the same byte for byte.

Review (see provgraph review): when the database holds decisions, or a
filter flag is given, each group is followed by its review state
(unreviewed, decided, stale with what changed) and latest decision; JSON is
then {"policy", "groups", "total", "next", "rejected", "unnormalized",
"counts", "incomplete_runs"} with a "review" object per group (the last
four as without review state; the counts are the database's), and CSV
adds review_state, decision, reviewer and review_id. --id, --key,
--domain, --engine, --since and --state select groups, --sort orders them
(size, risk), and --limit pages them: the last line (JSON: next) gives the
--cursor of the next page. --id and --key also find single-member groups
unless --min-size is given. The groups are written as they are found, read
as --read says, with only the decisions held besides; --sort writes each
one to a temporary file in $TMPDIR (unlinked at once, so nothing is left
behind) and holds its place and sort key, 24 bytes a group, to read the
page back in order; --engine and --since read the engine and observation
time of every citation, which the grouping view does not keep (they
scan).

One group: --id or --key without the other filter flags reads that group
alone, not every group, and prints what the filtered listing prints for it
(an empty page when --verdict or --min-size excludes it). A database that
keeps a grouping view of the policy answers from the group's neighbourhood
(the keys redirects join to it, the groups sharing its content evidence,
both ends of its relations); any other is grouped whole, with the same
output. A key no citation has, or an id no group has, exits 1.

` + exitHelp(
			exitLineOK,
			"  1  --id or --key names no group",
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
	f.StringVar(&o.workMem, "work-mem", "", workMemHelp)
	f.StringVar(&o.read, "read", "auto", "how to read the database: scan (every citation at once: memory grows with the database), view (the grouping view a batch of keys at a time: bounded memory) or auto (the view when its rows keep member records or the citations would not fit in --work-mem; a scan only when they fit)")
	addRedactFlag(cmd, &o.redact)
	addFilterFlags(cmd, &o.filter)
	return cmd
}

func runGroups(cmd *cobra.Command, o groupsOptions) error {
	if o.format != "table" && o.format != "json" && o.format != "csv" {
		return usagef("--format %q: want table, json or csv", o.format)
	}
	if o.verdict != "" && !slices.Contains(verdicts, o.verdict) {
		return usagef("--verdict %q: want one of %s", o.verdict, strings.Join(verdicts, ", "))
	}
	workMem, err := groupsWorkMem(o.workMem)
	if err != nil {
		return err
	}
	how, err := groupsRead(o.read, workMem)
	if err != nil {
		return err
	}
	defer tuneGCForGroups(workMem)()
	opts := query.GroupOptions{MaxShared: o.maxShared, MinSize: o.minSize, Verdict: o.verdict, Review: o.review}
	reviewed := filterSet(cmd)
	if !reviewed {
		has, err := o.service().HasDecisions(cmd.Context())
		if err != nil {
			return err
		}
		reviewed = has
	}
	if reviewed {
		return runReviewedGroups(cmd, o, opts, how)
	}
	set, done, err := o.service().GroupsFrom(cmd.Context(), o.policy, query.GroupOptions{MaxShared: o.maxShared, MinSize: o.minSize, Verdict: o.verdict, Review: o.review}, how)
	if err != nil {
		return err
	}
	defer done()
	if o.read == "auto" && set.FromView() && !set.FromRecords() {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: more than %d citations, about %d bytes each, would not fit in the working memory (--work-mem): reading the grouping view a batch of keys at a time, which is slower (--read scan loads them all)\n", how.ScanLimit, groupsBytesPerCitation)
	}
	warnings := render.RedactIf(o.redact, set.Warnings())
	for _, w := range warnings {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", render.EscapeLine(w))
	}
	var groups render.GroupWriter = func(encode func([]byte, *query.Group) []byte, write func([]byte) error) (*query.Report, error) {
		return set.Write(cmd.Context(), encode, write)
	}
	if o.redact {
		groups = render.RedactGroups(groups)
	}
	return render.Groups(cmd.Context(), cmd.OutOrStdout(), o.format, render.RedactIf(o.redact, set.Policy()), warnings, groups)
}

// runReviewedGroups lists the groups with their review state, filtered,
// ordered and paged, as they are found (service.ReviewedSet), read as how
// says; --sort spools them to order them.
func runReviewedGroups(cmd *cobra.Command, o groupsOptions, opts query.GroupOptions, how service.GroupsRead) error {
	if err := o.filter.Check(); err != nil {
		return err
	}
	if (o.filter.ID != "" || o.filter.Key != "") && !cmd.Flags().Changed("min-size") {
		opts.MinSize = 1
	}
	if sel, ok, err := oneGroup(cmd, o.filter); ok || err != nil {
		if err != nil {
			return err
		}
		return runOneGroup(cmd, o, opts, sel, how)
	}
	opts.Detail = o.filter.NeedsDetail()
	rs, err := o.service().ReviewedFrom(cmd.Context(), o.policy, opts, how)
	if err != nil {
		return err
	}
	defer rs.Close()
	if o.read == "auto" && rs.Set.FromView() && !rs.Set.FromRecords() {
		fmt.Fprintf(cmd.ErrOrStderr(), "note: more than %d citations, about %d bytes each, would not fit in the working memory (--work-mem): reading the grouping view a batch of keys at a time, which is slower (--read scan loads them all)\n", how.ScanLimit, groupsBytesPerCitation)
	}
	for _, w := range render.RedactIf(o.redact, rs.Set.Warnings()) {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", render.EscapeLine(w))
	}
	return render.ReviewedStream(cmd.Context(), cmd.OutOrStdout(), o.format, render.RedactIf(o.redact, rs.Set.Policy()), func(encode func([]byte, *query.Group, *review.Status) []byte, write func([]byte) error) (render.Listed, error) {
		enc := encode
		if o.redact {
			enc = func(b []byte, g *query.Group, s *review.Status) []byte { return encode(b, render.Redacted(g), s) }
		}
		l, err := rs.Write(cmd.Context(), o.filter, enc, write)
		if err != nil {
			return render.Listed{}, err
		}
		rest := l.Rest
		if o.redact && rest != nil {
			// The rejected citations a report reads again when written
			// are redacted as they are read, as for groups without
			// review state.
			rest = render.Redacted(rest).WithRejectedMap(render.Redacted[query.RejectedURL])
		}
		return render.Listed{Shown: l.Shown, Total: l.Total, Next: l.Next, Rest: rest}, nil
	})
}

// oneGroup returns the key or id that --key or --id names when it is the
// only filter flag: that one group is then read by itself (service.OneGroup,
// from the grouping view when the database keeps one), not picked out of
// every group.
func oneGroup(cmd *cobra.Command, f service.GroupFilter) (string, bool, error) {
	for _, n := range []string{"domain", "engine", "since", "state", "sort", "limit", "cursor"} {
		if cmd.Flags().Changed(n) {
			return "", false, nil
		}
	}
	switch id, key := cmd.Flags().Changed("id"), cmd.Flags().Changed("key"); {
	case id && key:
		return "", false, nil
	case key && query.IsGroupID(f.Key):
		return "", false, usagef("--key %q is a group id, not a comparison key: use --id %s", f.Key, f.Key)
	case id && !query.IsGroupID(f.ID):
		return "", false, usagef("--id %q: a group id is g- and 12 hexadecimal digits (the id column of groups)", f.ID)
	case key:
		return f.Key, true, nil
	case id:
		return f.ID, true, nil
	}
	return "", false, nil
}

// runOneGroup prints the group of a key or id as the filtered listing
// prints it: a page of that group, or of none when the options do not list
// it (--verdict, --min-size).
func runOneGroup(cmd *cobra.Command, o groupsOptions, opts query.GroupOptions, sel string, how service.GroupsRead) error {
	a, status, err := o.service().OneGroup(cmd.Context(), o.policy, sel, opts, how)
	if err != nil {
		return err
	}
	for _, w := range render.RedactIf(o.redact, a.Warnings) {
		fmt.Fprintln(cmd.ErrOrStderr(), "warning:", render.EscapeLine(w))
	}
	page := render.ReviewedPage{Policy: render.RedactIf(o.redact, a.Policy), Groups: []*query.Group{}, Status: func(*query.Group) *review.Status { return status }}
	if a.Listed {
		g := a.Group
		if o.redact {
			g = render.Redacted(g)
		}
		page.Groups, page.Total = []*query.Group{g}, 1
	}
	return render.ReviewedGroups(cmd.OutOrStdout(), o.format, page)
}

// groupsRead checks --read and says how groups reads the database.
// workMem is --work-mem, 0 when not set: auto then reads a view without
// member records only when the citations would take more than three
// quarters of the machine's memory (a scan that fits is many times
// faster than such a view: 3 min 26 s and 10 GiB at 30 million citations
// here, against over an hour), and a view with them always
// (service.GroupsRead.ScanLimit).
func groupsRead(read string, workMem int64) (service.GroupsRead, error) {
	view := service.GroupsRead{View: true, Batch: groupsViewBatch(), Mapped: groupsViewMapped(workMem), Strict: true}
	switch read {
	case "scan":
		return service.GroupsScan, nil
	case "view":
		return view, nil
	case "auto":
		room := workMem
		if room <= 0 {
			room = memoryLimit() / 4 * 3
		}
		if room <= 0 {
			return service.GroupsScan, nil
		}
		view.ScanLimit = room / groupsBytesPerCitation
		return view, nil
	}
	return service.GroupsRead{}, usagef("--read %q: want auto, scan or view", read)
}

// groupsViewMapped is how much of the file groups keeps mapped when it
// reads the view: half of --work-mem, 256 MiB at least (0, for
// query.DefaultViewMapped, when --work-mem is not set). Mapped pages are
// what the view's point reads fault in again once they are given back:
// at ten million citations, 3 GiB mapped (--work-mem 6GiB) wrote a fifth
// more of the listing in its first 150 s than 1 GiB did.
func groupsViewMapped(workMem int64) int64 {
	if workMem <= 0 {
		return 0
	}
	return max(workMem/2, 256<<20)
}

// groupsViewBatch is the citations of a batch read from the view:
// $PROVGRAPH_VIEW_BATCH when set (tests set it small, so that every
// group's neighbourhood crosses batches), else query.DefaultViewBatch.
func groupsViewBatch() int {
	n, err := strconv.Atoi(os.Getenv("PROVGRAPH_VIEW_BATCH"))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}
