package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/spf13/cobra"
)

type compactOptions struct {
	dbOptions
	progress string
}

func newCompactCommand() *cobra.Command {
	var o compactOptions
	cmd := &cobra.Command{
		Use:   "compact [flags]",
		Short: "Merge the quad indexes' sorted runs into a few large ones, for faster lookups",
		Long: `Compact merges the sorted runs of the quad indexes POS and OSP into runs of
up to 134 million quads (one or two at ten million citations). Ingest
writes every batch as new runs and merges them only up to a few MiB, so a
large database keeps dozens of runs per index (85 at ten million
citations; 'provgraph check' prints how many), and every lookup of
lineage, the review workbench and 'query' probes each run. With the file
in the page cache that costs microseconds; from a cold page cache each
probe is a read of the disk, and a lineage command at ten million
citations read about 1,500 pages, 600 of them in the runs of POS. Run it
after a large ingest; later ingests add runs again, and it can be run
again at any time: the merged runs of full size are left as they are, and
the rest merged again. The grouping views are compacted by 'provgraph view
compact' (and at the end of ingest).

No quad changes. It moves about two million tuples a transaction, in
key order, deleting them from the runs they came from in the same
transaction, so an interrupted compaction (Ctrl-C, kill -9, a full disk)
leaves every quad where a reader finds it, and the next compaction
carries on from the runs it left. The merged run gets its filter in the
last transaction; until then every lookup reads it. It takes about as
long as reading both indexes, holds the filter of the run it writes in
memory (1.25 bytes a quad, at most 168 MB), and needs little free disk:
the merged runs reuse the pages their sources give up.

--progress shows how far it is, on standard error (a bar on a terminal;
--progress lines for a log).

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag",
			"  3  I/O or internal error, including a missing database file, or interrupted\n     (Ctrl-C: what was merged stays merged; run it again to finish)",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph compact --db example.db
  nohup provgraph compact --db big.db --progress lines 2> compact.log &`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompact(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().StringVar(&o.progress, "progress", "auto", "progress on standard error: bar (a progress bar per index), lines (a line when an index starts and every 10 s, for a run whose standard error is a file or a log), none, or auto (bar on a terminal, none otherwise)")
	return cmd
}

func runCompact(cmd *cobra.Command, o compactOptions) error {
	switch o.progress {
	case "auto", "bar", "lines", "none":
	default:
		return usagef("--progress %q: want auto, bar, lines or none", o.progress)
	}
	if _, err := os.Stat(o.db); err != nil {
		return fmt.Errorf("compact: %w (ingest citations into it first)", err)
	}
	tuneGCForCompact()
	start := time.Now()
	stderr := cmd.ErrOrStderr()
	progress, endProgress := checkProgress(stderr, "compact", o.progress, start)
	done, err := o.service().CompactIndexes(cmd.Context(), progress)
	endProgress()
	out := cmd.OutOrStdout()
	for _, c := range done {
		switch {
		case c.Transactions == 0 && c.RunsBefore <= 1:
			fmt.Fprintf(out, "  %-4s  kept in %s already\n", c.Index, render.Plural(c.RunsBefore, "run"))
		case c.Transactions == 0:
			fmt.Fprintf(out, "  %-4s  kept in %s of full size and one smaller already\n", c.Index, render.Plural(c.RunsBefore-1, "run"))
		case err == nil:
			fmt.Fprintf(out, "  %-4s  %s now in %d: %s merged\n", c.Index, render.Plural(c.RunsBefore, "run"), c.RunsAfter, render.Plural(int(c.Tuples), "quad"))
		default:
			fmt.Fprintf(out, "  %-4s  %s of %s moved into a merged run before the stop\n", c.Index, render.Plural(int(c.Tuples), "quad"), render.Plural(c.RunsBefore, "run"))
		}
	}
	if service.IsInterrupt(cmd.Context(), err) {
		fmt.Fprintf(stderr, "compact interrupted: every quad is still read as before; provgraph compact --db %s finishes the merge\n", render.EscapeText(o.db))
		return service.InterruptError{Err: err, Said: true}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "quad indexes of %s compacted: %s\n", render.EscapeText(o.db), time.Since(start).Round(time.Millisecond))
	for _, v := range viewsInRuns(context.WithoutCancel(cmd.Context()), &o.dbOptions, "") {
		fmt.Fprintln(stderr, compactHint(o.db, v.Policy.Digest, v.RowRuns))
	}
	return nil
}
