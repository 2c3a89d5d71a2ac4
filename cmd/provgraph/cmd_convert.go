package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
)

type convertOptions struct {
	dbOptions
	from           string
	addFilters     bool
	rebuildFilters bool
}

func newConvertCommand() *cobra.Command {
	var o convertOptions
	cmd := &cobra.Command{
		Use:   "convert --from OLD.db --db NEW.db | convert --add-filters --db FILE",
		Short: "Copy a database written by an earlier provgraph into the current format",
		Long: `Convert reads every quad of a database in an earlier file format (format 1,
cayley's key-value layout, written by provgraph before its compact store;
format 2, whose POS and OSP indexes were B-trees) and writes them, unchanged,
into a new file in the current format. The old file is
opened read-only and left as it is; the new file must not exist yet, so that
a conversion never mixes with other data. Literals are copied exactly: the
new file exports the same statements as the old one did.

The old file is checked before the new one is made: a missing, damaged or
locked file, or one that is not a provgraph store, is refused, and one
this build reads already (format 3 or 4) is refused as needing nothing
(exit status 2). Conversion writes in transactions of 50,000 quads; if it fails or is
interrupted (Ctrl-C), the new file is removed, so it can be run again.

With --add-filters, convert works on --db itself instead: it writes the
filter of every run of the POS and OSP indexes that has none (the runs of a
file written in format 3, which this build reads and turns into format 4 as
it writes: only runs written or merged since have filters, and the largest
runs are never merged again). A lookup reads only the runs whose filter may
hold what it asks for, so lineage and the review workbench answer in a few
milliseconds however many runs the file holds. Filters are derived from the
runs' own tuples: no quad is changed. Each run gets its filter in one
transaction, so an interrupted pass can be run again and finishes the rest.
--rebuild-filters writes the filter of every run anew, for a file whose
check reports a damaged filter.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, no --from, or --db already exists",
			"  3  I/O or internal error, including a missing or unreadable --from file",
			"  4  the --from file is locked by another process (convert waits "+service.ConvertLockTimeout.String()+";\n     --lock-timeout is for --db), or with --add-filters the --db file",
			"  5  with --add-filters, the --db file is damaged (run 'provgraph check' on it)"),
		Example: `  provgraph convert --from old.db --db new.db
  provgraph check --db new.db
  provgraph convert --add-filters --db prov.db`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().Lookup("db").Usage = "the new database file (must not exist)"
	cmd.Flags().StringVar(&o.from, "from", "", "the database file in the earlier format (required unless --add-filters; read-only)")
	cmd.Flags().BoolVar(&o.addFilters, "add-filters", false, "write the run filters that --db lacks, in place (no --from)")
	cmd.Flags().BoolVar(&o.rebuildFilters, "rebuild-filters", false, "write every run filter of --db anew, in place (no --from)")
	return cmd
}

func runConvert(cmd *cobra.Command, o convertOptions) error {
	if o.addFilters || o.rebuildFilters {
		return runAddFilters(cmd, o)
	}
	if o.from == "" {
		return usagef("--from is required: the database file to convert")
	}
	if _, err := os.Stat(o.db); err == nil {
		return usagef("--db %s exists: convert writes a new file only", o.db)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	// The old file is checked before the new file is made, which is
	// removed on failure (service.Convert).
	start := time.Now()
	sum, err := o.service().Convert(cmd.Context(), o.from)
	switch {
	case errors.Is(err, service.ErrCurrentFormat):
		return usagef("--from %s is %s", o.from, service.ErrCurrentFormat)
	case errors.Is(err, fs.ErrExist):
		return usagef("--db %s exists: convert writes a new file only", o.db)
	case service.IsInterrupt(cmd.Context(), err):
		fmt.Fprintf(cmd.ErrOrStderr(), "convert interrupted: %s is as it was, and the incomplete new file was removed (%s)\n", render.EscapeText(o.from), render.EscapeText(o.db))
		return service.InterruptError{Err: err, Said: true}
	case err != nil:
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "convert %s: %s read, %d written to %s, %s\n", o.from, render.Plural(sum.Read, "quad"), sum.Added, o.db, time.Since(start).Round(time.Millisecond))
	return nil
}

// runAddFilters is convert --add-filters and --rebuild-filters.
func runAddFilters(cmd *cobra.Command, o convertOptions) error {
	if o.from != "" {
		return usagef("--add-filters and --rebuild-filters work on --db in place: --from is not for them")
	}
	if _, err := os.Stat(o.db); err != nil {
		return err
	}
	st, err := o.service().Open(false)
	if err != nil {
		return err
	}
	start := time.Now()
	n, err := st.WriteRunFilters(cmd.Context(), o.rebuildFilters)
	if cerr := st.Close(); err == nil {
		err = cerr
	}
	if service.IsInterrupt(cmd.Context(), err) {
		fmt.Fprintf(cmd.ErrOrStderr(), "convert interrupted: %s written to %s; run it again for the rest\n", render.Plural(n, "run filter"), render.EscapeText(o.db))
		return service.InterruptError{Err: err, Said: true}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "convert %s: %s written, %s\n", render.EscapeText(o.db), render.Plural(n, "run filter"), time.Since(start).Round(time.Millisecond))
	return nil
}
