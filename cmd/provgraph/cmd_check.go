package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/spf13/cobra"
)

type checkOptions struct {
	dbOptions
	progress string
}

// checkProgress returns the progress function of the --progress of check
// and of the other commands that read a whole database (what names the
// command): nil for none, and a function that ends it (a bar is finished).
func checkProgress(stderr io.Writer, what, mode string, start time.Time) (func(service.CheckProgress), func()) {
	if f, ok := stderr.(*os.File); ok && mode == "auto" && term.IsTerminal(int(f.Fd())) {
		mode = "bar"
	}
	switch mode {
	case "lines":
		return checkProgressLines(stderr, what, start), func() {}
	case "bar":
		var bar *progressbar.ProgressBar
		part := ""
		end := func() {
			if bar != nil {
				bar.Finish()
				bar = nil
			}
		}
		return func(p service.CheckProgress) {
			if p.Part != part {
				end()
				part = p.Part
				total := p.Total
				if total == 0 {
					total = -1 // a spinner
				}
				bar = progressbar.NewOptions64(total,
					progressbar.OptionSetWriter(stderr),
					progressbar.OptionSetDescription(what+": "+render.EscapeText(p.Part)),
					progressbar.OptionShowCount(),
					progressbar.OptionSetItsString(p.Unit),
					progressbar.OptionShowIts(),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			bar.Set64(p.Done)
		}, end
	}
	return nil, func() {}
}

// checkProgressLines writes a line to w when a part of the check starts,
// then at most every progressEvery while it runs: what a check started in
// the background (nohup, a service, cron) shows of where it is.
func checkProgressLines(w io.Writer, what string, start time.Time) func(service.CheckProgress) {
	var last time.Time
	part := ""
	return func(p service.CheckProgress) {
		now := time.Now()
		if p.Part == part && now.Sub(last) < progressEvery {
			return
		}
		first := p.Part != part
		part, last = p.Part, now
		took := now.Sub(start).Round(time.Second)
		switch {
		case p.Unit == "":
			fmt.Fprintf(w, "%s: %s, %s\n", what, render.EscapeText(p.Part), took)
		case first && p.Done == 0 && p.Total > 0:
			fmt.Fprintf(w, "%s: %s: %d %s to read, %s\n", what, render.EscapeText(p.Part), p.Total, p.Unit, took)
		case p.Total > 0:
			fmt.Fprintf(w, "%s: %s: %d of %d %s, %s\n", what, render.EscapeText(p.Part), p.Done, p.Total, p.Unit, took)
		default:
			fmt.Fprintf(w, "%s: %s: %d %s, %s\n", what, render.EscapeText(p.Part), p.Done, p.Unit, took)
		}
	}
}

func newCheckCommand() *cobra.Command {
	var o checkOptions
	cmd := &cobra.Command{
		Use:   "check [flags]",
		Short: "Verify that the database file is consistent",
		Long: `Check reads the whole database, without changing it, and verifies that it is
consistent:
  - the file is a provgraph store in the format this build reads;
  - the term dictionary holds every id from 1 up without gaps, each a term in
    its one stored form, each found again through the hash index;
  - each of the three quad indexes (SPO, POS, OSP) is in order, without
    repeats, and uses only terms the dictionary has, each where it may stand
    (no literal subject, an IRI predicate);
  - every quad of the SPO index has its twins in POS and OSP, and all three
    hold as many quads as the quad counter says;
  - each grouping view (see 'provgraph view') holds exactly the rows the
    quads give under its policy (with each row's member record, in a view
    of format 7), as many as its row count says, and exactly
    the postings its rows give; a difference names the policy and the first
    differing key and citation id or posting; the sorted runs a view's rows
    and postings are kept in (format 6) each hold what their meta says, in
    order, with a filter that holds every key. A file without views (format
    4 or before) passes, and check says that no view is kept;
  - each complete set of group records (see 'provgraph queue'), in one
    ordered pass: every record decodes, every key of a record has its key
    entry and there is no other, every queued record is in the queue under
    its smallest key and the queue holds no other, and the counts are the
    records' by verdict. Records without changed keys pending are also
    compared with a fresh build, record by record: up to 250,000 citations
    a whole grouping (the memory of 'provgraph groups'), past that one read
    from the grouping view a batch at a time, as 'provgraph queue --build'
    reads it (when the view cannot be read so, check says the records
    were checked structurally only). Records behind
    changed keys (a run stopped before its end) are not a problem: check
    says it checked them structurally only. A problem names the policy,
    --max-shared, the group or key, and the 'provgraph queue --build'
    command that rebuilds them.

Run it after a crash, a kill -9 or a copy of the file. It prints the store's
counters (with how much of the file is free pages, when a quarter or more
is: 'provgraph vacuum' gives them back) and, when something is wrong, each
problem found (up to 20), with exit status 5. A check of ten million citations runs for tens of minutes:
--progress shows which part it is reading and how far it is, on standard
error (a bar on a terminal; --progress lines for a log).

Check reads every page of the file but keeps at most 256 MiB of it mapped
(the limit ingest keeps to): pages already read are dropped from the
process's memory, not from the kernel's page cache, so that its resident
memory does not grow with the file. It compares the hash index with the
terms by fingerprints of their (hash, id) pairs, reading each once; only
when they differ does it look each term up, to name the ones not found. A
view's rows are
made with a scan of the citations up to 250,000 of them (about 2 KB of
memory each); past that, each citation is read by point lookups with 704
MiB of the file mapped, so that memory stays bounded, at about five times
the CPU of the scan (docs/SCALE.md), on every core (a read transaction
each, on the same snapshot).

Before the file is mapped, its size is checked against the page count its
bbolt meta page gives, and the meta pages against their checksums: a
truncated file is refused at once, naming both sizes. A page that is not
what its parent says (bbolt's "page expected to be" assertion), a read past
the end of the file, an entry that does not decode or an id outside the
dictionary ends the part of the check that met it (the dictionary, one
index, the cross-index lookups) as a problem, and the other parts still run.
Every other command refuses a damaged file the same way, with exit status 5
and a message naming the file and what is wrong.

` + exitHelp(
			"  0  the database is consistent",
			"  2  usage error: bad flag or argument",
			"  3  I/O or internal error, including a missing database file or one in\n     an earlier format (see 'provgraph convert')",
			exitLineLocked,
			"  5  the database is inconsistent; the problems found are listed"),
		Example: `  provgraph check --db example.db
  nohup provgraph check --db big.db --progress lines > check.out 2> check.log &`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().StringVar(&o.progress, "progress", "auto", "progress on standard error: bar (a progress bar per part of the check), lines (a line when a part starts and every 10 s, for a run whose standard error is a file or a log), none, or auto (bar on a terminal, none otherwise)")
	return cmd
}

func runCheck(cmd *cobra.Command, o checkOptions) error {
	switch o.progress {
	case "auto", "bar", "lines", "none":
	default:
		return usagef("--progress %q: want auto, bar, lines or none", o.progress)
	}
	st, err := o.open(true)
	if err != nil {
		return err
	}
	defer st.Close()
	// The counters come first, but a damaged file whose counters cannot
	// be read is still checked: Check lists everything it finds.
	out := cmd.OutOrStdout()
	stats, statsErr := st.Quads.Stats()
	if statsErr == nil {
		render.CheckCounters(out, render.StoreCounters{Path: o.db, Format: stats.Format, Version: stats.Version, Quads: stats.Quads,
			Terms: stats.Terms, HashRuns: stats.HashRuns, QuadRuns: stats.QuadRuns, FileBytes: stats.FileBytes, FreeBytes: stats.FreeBytes})
	}
	tuneGCForCheck()
	start := time.Now()
	progress, endProgress := checkProgress(cmd.ErrOrStderr(), "check", o.progress, start)
	records, err := st.CheckAll(cmd.Context(), progress)
	endProgress()
	if err != nil {
		return err
	}
	if statsErr != nil {
		return statsErr
	}
	// A failed write of this line is reported by Run, as "write standard
	// output" (outputWriter), like every other.
	render.CheckConsistent(out, time.Since(start))
	if err := checkViewsSaid(cmd, st); err != nil {
		return err
	}
	checkRecordsSaid(cmd, records, o.db)
	if n, err := st.Quads.RunsToCompact(); err == nil && n >= compactIndexRuns {
		fmt.Fprintf(cmd.ErrOrStderr(), "the quad indexes hold %d runs to merge, each of which a lookup probes: provgraph compact --db %s merges them\n", n, render.EscapeText(o.db))
	}
	return nil
}

// checkRecordsSaid says how check verified each set of group records:
// against a fresh build, or structurally only and why (records behind
// changed keys are information, not a problem), or that it did not.
func checkRecordsSaid(cmd *cobra.Command, records []service.RecordsCheck, db string) {
	out := cmd.OutOrStdout()
	for _, c := range records {
		head := fmt.Sprintf("group records of policy %s, --max-shared %d", render.EscapeText(c.Name), c.MaxShared)
		build := fmt.Sprintf("provgraph queue --build --db %s --policy %s --max-shared %d", render.EscapeText(db), c.Policy, c.MaxShared)
		switch {
		case c.Skipped != "":
			fmt.Fprintf(out, "%s: %s; %s builds them\n", head, c.Skipped, build)
		case c.Compared:
			fmt.Fprintf(out, "%s: %s, as a fresh build gives them\n", head, render.Plural(c.Groups, "group"))
		case c.Dirty > 0:
			fmt.Fprintf(out, "%s: %s, structurally sound; behind %s (a run stopped before its end), so checked structurally only (not a problem: queue uses them again once that run is run again, or after %s)\n",
				head, render.Plural(c.Groups, "group"), render.Plural(c.Dirty, "changed key"), build)
		default:
			fmt.Fprintf(out, "%s: %s, checked structurally only: %s\n", head, render.Plural(c.Groups, "group"), render.EscapeText(c.NotCompared))
		}
	}
}

// checkViewsSaid says which grouping views check verified, or that none
// is kept.
func checkViewsSaid(cmd *cobra.Command, st *service.Store) error {
	views, err := st.Views(cmd.Context())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if len(views) == 0 {
		fmt.Fprintln(out, "no grouping view is kept (provgraph view rebuild writes one)")
	}
	for _, v := range views {
		if v.Complete {
			fmt.Fprintf(out, "grouping view of policy %s: %s, as the quads give them\n", render.EscapeText(v.Policy.String()), render.Plural(int(v.Rows), "row"))
		} else {
			fmt.Fprintf(out, "grouping view of policy %s: incomplete (an interrupted rebuild), not used and not checked; run provgraph view rebuild\n", render.EscapeText(v.Policy.String()))
		}
	}
	return nil
}
