package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
)

type convertOptions struct {
	dbOptions
	from string
}

func newConvertCommand() *cobra.Command {
	var o convertOptions
	cmd := &cobra.Command{
		Use:   "convert --from OLD.db --db NEW.db",
		Short: "Copy a database written by an earlier provgraph into the current format",
		Long: `Convert reads every quad of a database in an earlier file format (format 1,
cayley's key-value layout, written by provgraph before its compact store;
format 2, whose POS and OSP indexes were B-trees) and writes them, unchanged,
into a new file in the current format. The old file is
opened read-only and left as it is; the new file must not exist yet, so that
a conversion never mixes with other data. Literals are copied exactly: the
new file exports the same statements as the old one did.

Conversion writes in transactions of 50,000 quads: if it is interrupted,
delete the new file and run it again.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, no --from, or --db already exists",
			"  3  I/O or internal error, including a missing or unreadable --from file",
			"  4  the --from file is locked by another process (convert waits "+graph.DefaultLockTimeout.String()+";\n     --lock-timeout is for --db)"),
		Example: `  provgraph convert --from old.db --db new.db
  provgraph check --db new.db`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	cmd.Flags().Lookup("db").Usage = "the new database file (must not exist)"
	cmd.Flags().StringVar(&o.from, "from", "", "the database file in the earlier format (required; read-only)")
	return cmd
}

func runConvert(cmd *cobra.Command, o convertOptions) error {
	if o.from == "" {
		return usagef("--from is required: the database file to convert")
	}
	if _, err := os.Stat(o.db); err == nil {
		return usagef("--db %s exists: convert writes a new file only", o.db)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	start := time.Now()
	st, err := o.open(false)
	if err != nil {
		return err
	}
	defer st.Close()
	batch := make([]graph.Quad, 0, ingest.DefaultBatchQuads)
	var read, added int
	flush := func() error {
		n, err := st.Add(batch)
		added += n
		batch = batch[:0]
		return err
	}
	err = graph.ReadEarlier(cmd.Context(), o.from, func(q graph.Quad) error {
		read++
		if batch = append(batch, q); len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil {
		return fmt.Errorf("convert %s to %s: %w (the new file is incomplete: delete it and convert again)", o.from, o.db, err)
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "convert %s: %s read, %d written to %s, %s\n", o.from, plural(read, "quad"), added, o.db, time.Since(start).Round(time.Millisecond))
	return nil
}
