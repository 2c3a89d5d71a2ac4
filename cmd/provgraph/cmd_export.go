package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/export"
)

type exportOptions struct {
	dbOptions
	format          string
	output          string
	includeOntology bool
	redact          bool
}

func newExportCommand() *cobra.Command {
	var o exportOptions
	cmd := &cobra.Command{
		Use:   "export [flags]",
		Short: "Write the whole graph as N-Quads, N-Triples, Turtle or JSON-LD, with a dataset description",
		Long: `Export writes every statement of the database, then a description of the
dataset, to standard output or, with -o, to a file. The database is opened
read-only and read in one pass; memory does not grow with its size. A file
is written atomically: it holds the complete export or is left as it was.

Formats:
  nq      N-Quads (default): one canonical statement per line; the dataset
          description is in its own named graph
  nt      N-Triples: one canonical statement per line
  ttl     Turtle, with prefixes (rdf, rdfs, xsd, owl, prov, pg, dcat, dct,
          void, skos), grouped by subject
  jsonld  JSON-LD, flattened: a @context and one node object per subject run

The order is the database's own, the same for the same database file; for
a byte-sorted N-Triples or N-Quads file pipe it through LC_ALL=C sort.

The description (DCAT, VoID, DCMI and SKOS terms, prov:wasGeneratedBy an
export activity) records the policies (name, version, digest, parser,
tracking parameters with reasons), the conventions (URLs are exact
xsd:string literals; times keep their RFC 3339 form as xsd:dateTime;
statuses and positions are xsd:integer; the redirect limit), the verdict
codebook of review groups, the provgraph version and the export time. Every
statement of it has a subject under https://w3id.org/provgraph/id/export/,
so a comparison can drop it. ingest --format nq|nt|ttl loads an export back.

An export is the evidence itself: raw URLs are written exactly, credentials
included, and --redact-userinfo (which groups, lineage, stats, normalize
and policy-diff take) is refused here with exit status 2, as a redacted
export would no longer be the stored evidence.

` + exitStatusHelp,
		Example: `  provgraph export --db example.db > example.nq
  provgraph export --db example.db --format ttl -o example.ttl
  provgraph export --db example.db --format jsonld --include-ontology -o example.jsonld`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExport(cmd, o)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.format, "format", string(export.NQuads), "output format: nq, nt, ttl or jsonld")
	f.StringVarP(&o.output, "output", "o", "-", `output file, written atomically; "-" is standard output`)
	f.BoolVar(&o.includeOntology, "include-ontology", false, "also write the provgraph vocabulary (ontology/provgraph.ttl)")
	f.BoolVar(&o.redact, "redact-userinfo", false, "refused: an export is the stored evidence, written exactly (see above)")
	return cmd
}

func runExport(cmd *cobra.Command, o exportOptions) error {
	if o.redact {
		return usagef("--redact-userinfo: export writes the stored evidence exactly and does not redact it; redact what groups, lineage or stats print instead")
	}
	format := export.Format(o.format)
	known := false
	var names []string
	for _, f := range export.Formats {
		known = known || f == format
		names = append(names, string(f))
	}
	if !known {
		return usagef("--format %q: want %s", o.format, strings.Join(names, ", "))
	}
	if o.output == "" {
		return usagef("-o: empty file name (use - for standard output)")
	}
	if o.output != "-" {
		if a, err := os.Stat(o.output); err == nil {
			if b, err := os.Stat(o.db); err == nil && os.SameFile(a, b) {
				return usagef("-o %s is the database file", o.output)
			}
		}
	}
	st, err := o.open(true)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := &export.Options{Format: format, IncludeOntology: o.includeOntology, Version: version()}
	ctx := cmd.Context()
	if hold := testHold("export-check", cmd.ErrOrStderr()); hold != nil {
		ctx = holdContext{ctx, hold}
	}
	var sum export.Summary
	where := "standard output"
	if o.output == "-" {
		sum, err = export.Write(ctx, st, cmd.OutOrStdout(), opts)
	} else {
		where = o.output
		sum, err = export.WriteFile(ctx, st, o.output, opts)
	}
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	if sum.RepairedIRIs > 0 {
		what := "IRIs were not valid IRIs (RFC 3987) and were"
		if sum.RepairedIRIs == 1 {
			what = "IRI was not a valid IRI (RFC 3987) and was"
		}
		fmt.Fprintf(stderr, "warning: %d stored %s written percent-encoded\n", sum.RepairedIRIs, what)
	}
	ontology := ""
	if o.includeOntology {
		ontology = fmt.Sprintf(", %d ontology", sum.Ontology)
	}
	fmt.Fprintf(stderr, "export: %s (%d data%s, %d dataset description) written to %s as %s in %s; dataset %s\n",
		plural(int(sum.Statements()), "statement"), sum.Data, ontology, sum.Description, where, format, sum.Elapsed.Round(time.Millisecond), sum.Dataset.Value)
	return nil
}
