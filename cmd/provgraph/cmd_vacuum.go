package main

import (
	"fmt"
	"io"
	"time"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
	"github.com/spf13/cobra"
)

type vacuumOptions struct {
	dbOptions
	progress string
}

func newVacuumCommand() *cobra.Command {
	var o vacuumOptions
	cmd := &cobra.Command{
		Use:   "vacuum [flags]",
		Short: "Rewrite the database file without its free space",
		Long: `Vacuum rewrites the database file without the space it no longer uses.
The file never shrinks by itself: a view rebuilt or dropped, the runs a
compaction merged and the rows a renormalize replaced leave free pages,
which later writes reuse but which stay in the file, and every command
that writes keeps a list of them in memory (some 80 bytes a free page).
A renormalize of ten million citations under a second policy left 11 GB
of a 23.7 GB file free; 'provgraph check' prints the file's size, and
vacuum says how much it gave back.

No quad, view or record changes: every bucket, key and value is copied, in
key order, into DB.vacuum beside the file, which is then renamed over it.
The copy holds a reader's lock on the database from start to end: commands
that read go on reading the old file, commands that write wait for it, up
to their --lock-timeout, then say it is locked (stop 'provgraph serve'
first); one that got the lock after the rename opens the new file. An
interrupted vacuum (Ctrl-C, kill -9, a full disk) leaves
the file as it was; the next vacuum replaces the partial DB.vacuum. It
needs free space beside the file for the live part of it, checked before
it starts, keeps at most 256 MiB of either file mapped, and takes about
as long as reading the file.

--progress shows how far the copy is, on standard error (a bar on a
terminal; --progress lines for a log).

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag",
			"  3  I/O or internal error, including a missing database file, too little\n     free space, or interrupted (Ctrl-C: the file is as it was)",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph vacuum --db example.db
  nohup provgraph vacuum --db big.db --progress lines 2> vacuum.log &`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVacuum(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().StringVar(&o.progress, "progress", "auto", "progress on standard error: bar, lines (a line every 10 s, for a log), none, or auto (bar on a terminal, none otherwise)")
	return cmd
}

func runVacuum(cmd *cobra.Command, o vacuumOptions) error {
	if err := validProgress(o.progress); err != nil {
		return err
	}
	// A copy in large transactions, as compact's: each commit's buffers
	// (a run's filter of up to 168 MB is one value) are garbage after it.
	tuneGCForCompact()
	start := time.Now()
	stderr := cmd.ErrOrStderr()
	progress, endProgress := checkProgress(stderr, "vacuum", o.progress, start)
	hold := testHold("vacuum-commit", stderr)
	each := func(written, live int64) {
		if progress != nil {
			progress(service.CheckProgress{Part: "writing the new file", Unit: "MB", Done: written / 1e6, Total: live / 1e6})
		}
		if hold != nil {
			hold()
		}
	}
	res, err := o.service().Vacuum(cmd.Context(), each)
	endProgress()
	if service.IsInterrupt(cmd.Context(), err) {
		fmt.Fprintf(stderr, "vacuum interrupted: %s is as it was\n", render.EscapeText(o.db))
		return service.InterruptError{Err: err, Said: true}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s vacuumed: %s before (%s of %d bytes), %s now, %s\n",
		render.EscapeText(o.db), megabytes(res.Before), render.Plural(res.FreePages, "free page"), res.PageSize, megabytes(res.After), time.Since(start).Round(time.Millisecond))
	return nil
}

// megabytes writes n bytes in megabytes with one decimal, as df -H does.
func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// vacuumHint writes, when a quarter of the database file at path or more
// is free pages (render.WorthVacuum), how much and the command that gives
// it back: what a command that frees pages (view rebuild, renormalize)
// says at its end. free and size are the store's FreeBytes and
// FileBytes (its Stats).
func vacuumHint(w io.Writer, path string, free, size int64) {
	if !render.WorthVacuum(free, size) {
		return
	}
	fmt.Fprintf(w, "%s of the %s file are free pages, which stay in it: provgraph vacuum --db %s gives them back\n",
		megabytes(free), megabytes(size), render.EscapeText(path))
}
