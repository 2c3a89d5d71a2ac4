package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
)

// dbOptions are the flags every command that opens the database shares.
type dbOptions struct {
	db          string
	lockTimeout time.Duration
}

func (o *dbOptions) addFlags(cmd *cobra.Command) {
	cmd.Flags().StringVar(&o.db, "db", "provgraph.db", "database file (must exist)")
	cmd.Flags().DurationVar(&o.lockTimeout, "lock-timeout", 5*time.Second, "how long to wait for another process to release the database (0: do not wait)")
}

func (o *dbOptions) open(readOnly bool) (*graph.Store, error) {
	timeout := o.lockTimeout
	if timeout <= 0 {
		timeout = -1 // graph.Options: fail at once (its zero means the default wait)
	}
	return graph.Open(o.db, &graph.Options{LockTimeout: timeout, ReadOnly: readOnly})
}

type ingestOptions struct {
	dbOptions
	policy      string
	skipInvalid bool
	format      string
	batch       int
}

func newIngestCommand(stdin io.Reader) *cobra.Command {
	var o ingestOptions
	cmd := &cobra.Command{
		Use:   "ingest [flags] FILE|-",
		Short: "Load citation observations (JSON Lines) or RDF into the database",
		Long: `Ingest reads citation observations, one JSON object per line (see README.md
for the fields; raw_url and observed_at are required), normalizes each raw URL
under the policy, and stores everything as PROV-O triples. "-" reads standard
input.

Nothing is lost and nothing is overwritten:
  - the whole input is validated first; a bad line stops the run with
    file:line: field: reason, and nothing of the run is written
    (--skip-invalid writes the valid lines and lists the others);
  - a raw URL the policy rejects is stored anyway, with its error;
  - a citation_id that already names different content is an error;
  - ingesting the same input again adds nothing but the record of the run;
  - an interrupted run (Ctrl-C, kill -9) leaves a readable database, and
    running the same input again completes it.

With --format nt, nq or ttl it loads RDF instead, such as a provgraph
export, keeping every literal exactly.

` + exitStatusHelp,
		Example: `  provgraph ingest --db cites.db testdata/citations.jsonl
  some-producer | provgraph ingest --db cites.db -
  provgraph ingest --db copy.db --format nq export.nq`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd, o, args[0], stdin)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().Lookup("db").Usage = "database file (created when missing)"
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "default", `policy: "default", "lenient" or a TOML policy file`)
	f.BoolVar(&o.skipInvalid, "skip-invalid", false, "write the valid records and report the invalid lines (exit status 1) instead of stopping")
	f.StringVar(&o.format, "format", "jsonl", "input format: jsonl (citation observations), nt, nq or ttl (RDF)")
	f.IntVar(&o.batch, "batch", ingest.DefaultBatchQuads, "quads per transaction")
	return cmd
}

func runIngest(cmd *cobra.Command, o ingestOptions, input string, stdin io.Reader) error {
	switch o.format {
	case "jsonl", ingest.FormatNTriples, ingest.FormatNQuads, ingest.FormatTurtle:
	default:
		return usagef("--format %q: want jsonl, nt, nq or ttl", o.format)
	}
	pol, err := normalize.LoadPolicy(o.policy)
	if err != nil {
		return usageError{err}
	}
	path, name := input, input
	if input == "-" {
		// Standard input is spooled to a temporary file: the input is read
		// twice, once to validate and once to write.
		tmp, err := os.CreateTemp("", "provgraph-ingest-*.jsonl")
		if err != nil {
			return fmt.Errorf("spool standard input: %w", err)
		}
		defer os.Remove(tmp.Name())
		if _, err := io.Copy(tmp, stdin); err != nil {
			tmp.Close()
			return fmt.Errorf("spool standard input: %w", err)
		}
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("spool standard input: %w", err)
		}
		path, name = tmp.Name(), "<stdin>"
	} else if _, err := os.Stat(input); err != nil {
		return usageError{err}
	}
	st, err := o.open(false)
	if err != nil {
		return err
	}
	defer st.Close()

	stderr := cmd.ErrOrStderr()
	opts := ingest.Options{Policy: pol, SkipInvalid: o.skipInvalid, BatchQuads: o.batch}
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Progress = func(p ingest.Progress) {
			if p.Phase != "write" && p.Phase != "done" {
				return
			}
			if bar == nil {
				bar = progressbar.NewOptions(p.TotalLines,
					progressbar.OptionSetWriter(stderr),
					progressbar.OptionSetDescription("ingest"),
					progressbar.OptionShowCount(),
					progressbar.OptionSetItsString("lines"),
					progressbar.OptionShowIts(),
					progressbar.OptionThrottle(100*time.Millisecond),
					progressbar.OptionClearOnFinish())
			}
			bar.Set(p.Lines)
		}
	}
	tuneGCForWrites()
	var sum ingest.Summary
	if o.format == "jsonl" {
		sum, err = ingest.File(cmd.Context(), st, path, name, opts)
	} else {
		sum, err = ingest.RDFFile(cmd.Context(), st, path, name, o.format, opts)
	}
	if bar != nil {
		bar.Finish()
	}
	for _, re := range sum.Invalid {
		fmt.Fprintf(stderr, "rejected %s\n", re)
	}
	if err != nil && !errors.Is(err, ingest.ErrInvalidRecords) {
		if sum.Run.Value != "" {
			fmt.Fprintf(stderr, "ingest stopped; %d quads were written. Run the same command again to complete run %s.\n", sum.QuadsAdded, sum.Run.Value)
		}
		var re *ingest.RecordError
		var ce *ingest.ConflictError
		if errors.As(err, &re) || errors.As(err, &ce) {
			return inputError{err}
		}
		return err
	}
	what := "records"
	if o.format != "jsonl" {
		what = "statements"
	}
	resumed := ""
	if sum.Resumed {
		resumed = " (completing an interrupted run)"
	}
	fmt.Fprintf(stderr, "ingest %s: %d %s, %d invalid lines, %d raw URLs rejected by policy %s (stored with their errors), %d quads added, %s%s\n",
		name, sum.Records, what, len(sum.Invalid), sum.URLRejected, pol.Name(), sum.QuadsAdded, sum.Elapsed.Round(time.Millisecond), resumed)
	if err != nil {
		return errRejected
	}
	return nil
}
