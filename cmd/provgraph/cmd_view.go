package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/provgraph/provgraph/internal/store"
)

func newViewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "view",
		Short: "Rebuild or list the grouping views the database keeps",
		Long: `A grouping view is derived data kept in the database file beside the quads,
per normalization policy: one row per citation, ordered by comparison key
then citation id, with what grouping compares of it (its key, whether it
was rejected or never normalized under the policy, the key-content flag,
same-host redirect targets, the URLs its relations point at, and the content
hash, text digest and SimHash of each successful retrieval), and postings
that find the keys sharing a content hash, a text digest or a SimHash block,
or redirecting or pointing at a key. It lets one group be found without
reading the whole database. A view made by this provgraph also keeps, in
each row, what a listed group shows of the citation (its member record: raw
URL, the normalization's rules, the retrievals' outcomes and hashes, the
relations, the passage check), so that 'provgraph groups --read view' lists
every group from the rows alone; a view made before (file format 6 or
earlier) lacks them until 'provgraph view rebuild'.

A new database keeps a view of the policy of its first ingest. Every later
ingest, resolve, extract and renormalize writes the rows of the citations it
adds or changes in the same transaction as their quads, so that a crash or
kill -9 leaves the view exactly as the quads. A database written by an
earlier provgraph (format 4 or before), or a policy added later, has no view
until 'provgraph view rebuild' writes one; nothing else needs it: every
query works without a view. 'provgraph check' verifies each view against the
quads. On a large database, 'provgraph view compact' merges a view's sorted
runs so that each lookup reads one.

` + exitHelp(
			"  0  this help was printed",
			"  2  usage error: no such view subcommand, or a bad flag"),
		// Without this, cobra prints the help and exits 0 for a misspelt
		// subcommand ("view rebiuld").
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			hint := ""
			cmd.SuggestionsMinimumDistance = 2
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %q?)", s[0])
			}
			return usagef("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint)
		},
	}
	cmd.AddCommand(newViewRebuildCommand(), newViewCompactCommand(), newViewStatusCommand())
	return cmd
}

func newViewCompactCommand() *cobra.Command {
	var o dbOptions
	var policy string
	cmd := &cobra.Command{
		Use:   "compact [flags]",
		Short: "Merge a grouping view's sorted runs into one per map, for faster reads",
		Long: `Compact merges the sorted runs that keep a grouping view's rows, and each of
its postings, into one run per map. Ingest writes a view in runs that stop
merging at a few MiB, so a large view is kept in many (85 for the rows of
ten million citations, as 'view status' shows), and every lookup of a key,
a content hash or a redirect target probes each run: 'groups --read view'
and 'lineage' then slow down as the database grows. After a compaction
each lookup reads one run. What the view holds is unchanged; later writes
add runs again, and a compaction can be run again at any time. A run of a
gigabyte or more that a compaction wrote is settled: later compactions
merge the runs written after it and leave it as it is, so that their time
follows what was written since, not the size of the view.

It writes about 64 MiB a transaction, so its memory stays bounded whatever
the size of the view, and it changes a map in its last transaction only:
an interrupted compaction (Ctrl-C, kill -9) leaves the view as it was, and
the next one begins that map again. It needs free disk space about the
size of the largest map while it runs (the old runs are freed at the end,
for bbolt to reuse; the file does not shrink). A view kept in B-trees
(format 5) has no runs: rebuild it instead.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, or a --policy the database does not hold",
			"  3  I/O or internal error, including a missing database file or a policy without a view",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph view compact --db example.db
  provgraph view compact --db example.db --policy provgraph-default`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			errOut := cmd.ErrOrStderr()
			last := time.Now()
			pol, maps, err := o.service().CompactView(cmd.Context(), policy, func(m service.CompactedMap) {
				if time.Since(last) >= 5*time.Second {
					last = time.Now()
					fmt.Fprintf(errOut, "view compact: map %s: %d entries written\n", m.Map, m.Entries)
				}
			})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for _, m := range maps {
				if m.Runs == 0 {
					fmt.Fprintf(out, "  %-8s  kept in one run already\n", m.Map)
					continue
				}
				noun := "posting"
				if m.Map == "rows" {
					noun = "row"
				}
				fmt.Fprintf(out, "  %-8s  %s merged into one: %s\n", m.Map, render.Plural(m.Runs, "run"), render.Plural(int(m.Entries), noun))
			}
			fmt.Fprintf(out, "view of policy %s compacted: %s\n", render.EscapeText(pol.String()), time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&policy, "policy", "", "the policy whose view to compact: NAME@VERSION, NAME or digest (default: the policy of the latest ingest or renormalize run)")
	return cmd
}

func newViewRebuildCommand() *cobra.Command {
	var o dbOptions
	var policy string
	var batch int
	cmd := &cobra.Command{
		Use:   "rebuild [flags]",
		Short: "Drop a policy's grouping view and write it again from the quads",
		Long: `Rebuild drops the grouping view of one policy and writes it again from the
citations stored, --batch citations per transaction, and writes the view's
completion marker last: an interrupted rebuild (Ctrl-C, kill -9) leaves no
view of the policy, only rows that the next rebuild drops, and queries scan
meanwhile. It then merges the view's sorted runs into one per map, as
'provgraph view compact' does. Its memory is two batches of citations, 4
bytes per citation stored and the pages of the file it keeps mapped (up to
704 MiB).

Run it on a database written by an earlier provgraph (format 4 or before,
which 'provgraph ingest' says keeps no view), after renormalize under a
policy that has none, when 'provgraph check' finds a view damaged, or when
'view status' says a view's rows have no member records (made by provgraph
before format 7). Every view made marks the file format 7, which provgraph
builds before this one cannot open (a format 6 or 5 file's views stay as
they are, and readable by them, until rebuilt). On the README's machine
(2 cores) a rebuild of 1M citations took 35 s, of 10M 9 minutes. The group
records kept beside the view (provgraph queue) go with it, and rebuild
says how to build them again.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, or a --policy the database does not hold",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph view rebuild --db example.db
  provgraph view rebuild --db example.db --policy provgraph-default`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch < 1 {
				return usagef("--batch %d: want at least 1", batch)
			}
			start := time.Now()
			errOut := cmd.ErrOrStderr()
			// What a rebuild keeps is the writer's (the hash index's
			// filters, bbolt's freelist): the rows are garbage a batch
			// later.
			tuneGCForWrites()
			var dropped []int
			pol, rows, err := o.service().RebuildView(cmd.Context(), policy, batch, func(done, total int) {
				fmt.Fprintf(errOut, "view rebuild: %d of %d citations\n", done, total)
				if done == total {
					fmt.Fprintf(errOut, "view rebuild: merging the view's sorted runs into one per map (as view compact does)\n")
				}
			}, &dropped)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "view of policy %s rebuilt: %s, %s\n", render.EscapeText(pol.String()), render.Plural(int(rows), "row"), time.Since(start).Round(time.Millisecond))
			for _, m := range dropped {
				fmt.Fprintf(errOut, "the group records of policy %s, --max-shared %d went with the old view; provgraph queue answers again once you run: provgraph queue --build --db %s --policy %s --max-shared %d\n",
					render.EscapeText(pol.String()), m, render.EscapeText(o.db), render.EscapeText(pol.Digest), m)
			}
			if st, err := o.open(true); err == nil {
				if stats, err := st.Quads.Stats(); err == nil {
					vacuumHint(errOut, o.db, stats.FreeBytes, stats.FileBytes)
				}
				st.Close()
			}
			return nil
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&policy, "policy", "", "the policy whose view to rebuild: NAME@VERSION, NAME or digest (default: the policy of the latest ingest or renormalize run)")
	cmd.Flags().IntVar(&batch, "batch", 20000, "citations written per transaction")
	return cmd
}

func newViewStatusCommand() *cobra.Command {
	var o dbOptions
	cmd := &cobra.Command{
		Use:   "status [flags]",
		Short: "List the policies with a grouping view, their rows, and since when",
		Long: `Status lists each policy whose grouping view the database keeps: the rows it
holds (one per citation stored), and how and when it was begun (by the
first ingest of a new database, or by 'provgraph view rebuild'). A view is
kept current by every write since, so it reflects every run the database
lists; the latest is printed. A view whose rebuild was interrupted is listed
as incomplete: it is not used until rebuilt. Under each complete view it
says what the group records kept beside it (provgraph queue) are: how many
groups and when they were made current, behind how many changed keys (a
run stopped before its end; running it again refreshes them), incomplete,
or none, with the command that builds them. It reads a few keys, not the
data (and the changed keys, up to 10,000).

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag or argument",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph view status --db example.db`,
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := o.open(true)
			if err != nil {
				return err
			}
			defer st.Close()
			views, err := st.Views(cmd.Context())
			if err != nil {
				return err
			}
			runs, err := st.Runs(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(views) == 0 {
				fmt.Fprintln(out, "no grouping view is kept: queries scan the database (provgraph view rebuild --db FILE writes one)")
			}
			recs, err := st.RecordsStatus(cmd.Context())
			if err != nil {
				return err
			}
			for _, v := range views {
				state := "complete, begun by " + v.Built
				if !v.Complete {
					state = "incomplete (an interrupted rebuild): not used; run provgraph view rebuild"
				}
				fmt.Fprintf(out, "%s  %s  %s\n", render.EscapeText(v.Policy.String()), render.Plural(int(v.Rows), "row"), state)
				switch v.Layout {
				case "sorted runs":
					fmt.Fprintf(out, "  kept in sorted runs (rows in %s)\n", render.Plural(v.RowRuns, "run"))
					if v.Complete && v.RowRunsToMerge >= compactHintRuns {
						fmt.Fprintf(out, "  each lookup probes every run: provgraph view compact --db %s --policy %s merges %d of them into one\n", render.EscapeText(o.db), v.Policy.Digest, v.RowRunsToMerge)
					}
				case "B-trees":
					fmt.Fprintln(out, "  kept in B-trees (format 5): provgraph view rebuild keeps it in sorted runs, faster to write")
				}
				if v.Complete && !v.Members {
					fmt.Fprintln(out, "  rows without member records (format 6 or earlier): groups --read view reads each member's citation; provgraph view rebuild adds them")
				}
				if !v.Complete {
					continue
				}
				kept := false
				for _, r := range recs {
					if r.Policy != v.Policy.Digest {
						continue
					}
					kept = true
					fmt.Fprintf(out, "  group records, --max-shared %d: %s\n", r.MaxShared, recordsState(r, o.db, v.Policy.Digest))
				}
				if !kept {
					fmt.Fprintf(out, "  no group records: provgraph queue answers once you run: provgraph queue --build --db %s --policy %s\n", render.EscapeText(o.db), v.Policy.Digest)
				}
			}
			if len(runs) > 0 {
				last := runs[len(runs)-1]
				fmt.Fprintf(out, "latest run: %s %s, started %s\n", last.Kind, last.Status, last.StartedAt)
			}
			return nil
		},
	}
	o.addFlags(cmd)
	return cmd
}

// viewsInRuns lists the complete grouping views whose rows have
// compactHintRuns runs or more to merge: that of the policy with digest only, or
// every one when only is empty. None when they cannot be read (the runs
// only decide whether to compact).
func viewsInRuns(ctx context.Context, o *dbOptions, only string) []store.ViewInfo {
	st, err := o.open(true)
	if err != nil {
		return nil
	}
	defer st.Close()
	views, err := st.Views(ctx)
	if err != nil {
		return nil
	}
	var out []store.ViewInfo
	for _, v := range views {
		if (only == "" || v.Policy.Digest == only) && v.Complete && v.RowRunsToMerge >= compactHintRuns {
			out = append(out, v)
		}
	}
	return out
}

// compactHint is what ingest --no-compact says when the rows of the view
// of the policy with digest d are kept in runs (compactHintRuns or more):
// that view compact merges them, which makes each lookup of groups and
// lineage read one run (at ten million citations, groups from the view
// 40-47 s instead of 74-77 s).
func compactHint(db, d string, runs int) string {
	return fmt.Sprintf("the grouping view is kept in %d runs, each of which a lookup probes: provgraph view compact --db %s --policy %s merges them into one (about 80 s at ten million citations), after which groups and lineage read faster", runs, render.EscapeText(db), d)
}

// compactHintRuns is from how many runs of rows ingest compacts the view
// and view status suggests view compact: a lookup then probes that many filters and seeks in those
// that may hold its key. A variable for tests, whose views are small.
var compactHintRuns = 16

// recordsState says whether group records answer provgraph queue, and if
// not, what makes them answer again.
func recordsState(r service.RecordsStatus, db, digest string) string {
	build := fmt.Sprintf("provgraph queue --build --db %s --policy %s --max-shared %d", render.EscapeText(db), digest, r.MaxShared)
	switch {
	case !r.Complete:
		return "incomplete (a build or refresh that stopped): not used; the next run that writes drops them, or run " + build
	case r.Dirty > 0:
		n := render.Plural(r.Dirty, "changed key")
		if r.DirtyMore() {
			n = "more than " + n
		}
		return fmt.Sprintf("behind %s (a run stopped before its end): not used until that run is run again, or run %s", n, build)
	}
	return fmt.Sprintf("%s, made current by %s", render.Plural(r.Groups, "group"), r.Marker)
}
