package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/server"
	"github.com/provgraph/provgraph/internal/service"
)

type queryOptions struct {
	dbOptions
	lang    string
	timeout time.Duration
	rows    int
}

func newQueryCommand() *cobra.Command {
	var o queryOptions
	cmd := &cobra.Command{
		Use:   "query [flags] QUERY",
		Short: "Run an ad-hoc Gizmo query on the database, read-only",
		Long: `Query runs a query in cayley's Gizmo language (JavaScript-like path
traversals: g.V(...).Out(...).Has(...).All(); see README.md for worked
provenance examples) on the database, read-only, and prints its results as
a JSON object {"results": [...], "truncated": BOOL}. Nodes are IRIs written
<https://...>, literals are strings. At most --rows results are printed
(truncated says there were more) and the query is stopped after
--timeout.

SPARQL on the store is not supported: export the database
(provgraph export --format nq) and load it into Oxigraph or rdflib
(README.md shows how).

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, or a query that does not parse or fails",
			"  3  I/O or internal error, a missing database file, or the time limit reached",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph query --db example.db 'g.V().Has("<https://w3id.org/provgraph/ns#engineName>", "chatgpt").All()'`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.lang != "gizmo" {
				return usagef("--lang %q: want gizmo", o.lang)
			}
			if o.rows < 1 || o.timeout <= 0 {
				return usagef("--rows and --timeout must be positive")
			}
			st, err := o.open(true)
			if err != nil {
				return err
			}
			defer st.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			res, err := st.Gizmo(ctx, args[0], o.rows)
			var ue service.UsageError
			switch {
			case errors.As(err, &ue):
				return err
			case err != nil && ctx.Err() != nil && cmd.Context().Err() == nil:
				return fmt.Errorf("query stopped after --timeout %s: %w", o.timeout, err)
			case err != nil:
				return err
			}
			return render.JSON(cmd.OutOrStdout(), res)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.lang, "lang", "gizmo", "query language: gizmo")
	f.DurationVar(&o.timeout, "timeout", server.DefaultQueryTimeout, "stop the query after this long")
	f.IntVar(&o.rows, "rows", server.DefaultQueryRows, "print at most this many results")
	return cmd
}
