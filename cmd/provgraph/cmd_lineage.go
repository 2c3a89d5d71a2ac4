package main

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
)

type lineageOptions struct {
	dbOptions
	policy    string
	url       string
	format    string
	scope     string
	maxShared int
	redact    bool
	workMem   string
}

// lineageDatabaseBytesPerCitation is what lineage --group-scope database
// holds per citation: every citation loaded whole and grouped, as stats
// --explain holds them (2.98 GB of peak RSS at a million citations).
const lineageDatabaseBytesPerCitation = 3000

func newLineageCommand() *cobra.Command {
	var o lineageOptions
	cmd := &cobra.Command{
		Use:   "lineage [flags] (CITATION_ID | --url RAW_URL)",
		Short: "Show everything known about one citation, from observation to review group",
		Long: `Lineage prints the provenance of one citation, or of every citation whose raw
URL is exactly RAW_URL (byte for byte: the raw URL is evidence and is not
normalized to look it up):

  - the observation: engine, answer, position, question, time;
  - the raw URL and its fragment, and the base URL of a relative one;
  - its normalization under the policy (name@version and digest), every
    step as rule, before -> after, the comparison key, or the rejection;
  - every retrieval: each redirect hop with status and time, the final
    status, the resolved URL, content hash, snapshot reference and the
    canonical declarations as observed, with their source;
  - format, mirror, syndication and archive relations, declared in the
    input or detected from the URL;
  - the review group it falls in (as 'provgraph groups' derives it), its
    verdict and size, the reasons this citation is in it, and the group's
    relations as 'provgraph groups' lists them.

The database is opened read-only and never changed.

The group is computed from the citation's neighbourhood by default (the
citations sharing its key, redirect targets and sources, content hash
sharers), which takes milliseconds whatever the size of the database. A
database that keeps a grouping view of the policy (ingest keeps one unless
--no-view) gives the neighbourhood from the view, and the group is then
exactly the one 'provgraph groups' lists (the report says "computed from
the grouping view"). Without a view it is read by index lookups, which can
miss a same-host redirect into the group that ends at a URL written
differently from the key it normalizes to. --group-scope database computes
the group over the whole database, exactly as 'provgraph groups' does, at
the cost of reading all of it and holding every citation, about 3 KB each
(3.0 GB at a million citations): it counts them first and exits 2 when
they would take more than the working memory, --work-mem (default
$PROVGRAPH_WORK_MEM, else three quarters of the machine's or cgroup's
memory): a database that keeps a grouping view then gives the group from
the view (the same group; standard error says so), one without exits 2
rather than be killed for lack of memory.

Formats:
  text  an indented report for people (the default); a value that holds a
        control or bidirectional formatting character is shown as a quoted
        Go string ("a\x1b[2K"), in DOT labels as \u001B
  json  a JSON array with one object per citation (values unescaped)
  dot   one Graphviz digraph in PROV style: entities as yellow ellipses,
        activities as blue rectangles, agents as orange houses; render it
        with 'dot -Tsvg'

` + exitHelp(
			"  0  the lineage was printed",
			"  1  no citation has that id or raw URL (nothing is printed)",
			"  2  usage error: bad flag or argument, no such policy in the database, or\n     with --group-scope database more citations than --work-mem holds and no\n     grouping view",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph lineage --db example.db gpt-17-2
  provgraph lineage --db example.db --url 'https://www.w3.org/TR/prov-o/?utm_source=chatgpt.com' --format json
  provgraph lineage --db example.db gem-5-2 --format dot | dot -Tsvg > lineage.svg`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLineage(cmd, o, args)
		},
	}
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.Lookup("db").Usage = "database file (opened read-only, never created)"
	f.StringVar(&o.policy, "policy", "", "the policy whose normalization and group to show: NAME@VERSION, NAME or a digest (default: the policy used by the latest ingest or renormalize run)")
	f.StringVar(&o.url, "url", "", "show every citation whose raw URL is exactly this text")
	f.StringVar(&o.format, "format", "text", "output format: text, json or dot")
	f.StringVar(&o.scope, "group-scope", query.ScopeNeighbourhood, "where the review group is computed from: neighbourhood (fast) or database (exact, reads everything)")
	f.IntVar(&o.maxShared, "max-shared", model.DefaultMaxShared, "a redirect target or content hash shared by more groups than this is not duplicate evidence (as for groups)")
	f.StringVar(&o.workMem, "work-mem", "", "with --group-scope database, the memory lineage may take, e.g. 8GiB: it refuses more citations than that holds (default $PROVGRAPH_WORK_MEM, else three quarters of the machine's or cgroup's memory)")
	addRedactFlag(cmd, &o.redact)
	return cmd
}

func runLineage(cmd *cobra.Command, o lineageOptions, args []string) error {
	byURL := cmd.Flags().Changed("url")
	switch {
	case byURL && len(args) > 0:
		return usagef("give a citation id or --url, not both")
	case !byURL && len(args) == 0:
		return usagef("%s needs a citation id or --url RAW_URL", cmd.CommandPath())
	}
	switch o.format {
	case "text", "json", "dot":
	default:
		return usagef("--format %q: want text, json or dot", o.format)
	}
	if o.scope != query.ScopeNeighbourhood && o.scope != query.ScopeDatabase {
		return usagef("--group-scope %q: want %s or %s", o.scope, query.ScopeNeighbourhood, query.ScopeDatabase)
	}
	if o.scope == query.ScopeDatabase {
		err := fitsWorkMem(cmd, o.service(), o.db, o.workMem, lineageDatabaseBytesPerCitation,
			"lineage --group-scope database holds every citation whole", "lineage without --group-scope database answers from the citation's neighbourhood")
		if err == nil {
			tuneGCForQueries() // the whole database is loaded
		} else {
			// The grouping view's groups are the whole database's: past
			// the working memory, the group is read from it instead.
			ok, verr := o.service().ViewUsable(cmd.Context(), o.policy)
			if verr != nil || !ok {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "lineage: --group-scope database would hold every citation, more than the working memory (--work-mem): the group is read from the grouping view instead, whose groups are the whole database's\n")
			o.scope = query.ScopeNeighbourhood
		}
	} else if o.workMem != "" {
		if _, err := workMemFlag(o.workMem); err != nil {
			return err
		}
	}
	ls, ix, err := o.service().LineageReviewed(cmd.Context(), service.LineageRequest{
		ID: first(args), URL: o.url, ByURL: byURL,
		LineageOptions: query.LineageOptions{Policy: o.policy, MaxShared: o.maxShared, Scope: o.scope},
	})
	if err != nil {
		return err
	}
	orig := ls
	ls = render.RedactIf(o.redact, ls)
	if len(ls) > 0 {
		for _, w := range ls[0].Warnings {
			fmt.Fprintln(cmd.ErrOrStderr(), "warning:", render.EscapeLine(w))
		}
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	switch o.format {
	case "json":
		if ix.Len() == 0 {
			err = render.JSON(out, ls)
			break
		}
		wd := make([]render.LineageWithDecisions, len(ls))
		for i, l := range ls {
			wd[i] = render.LineageWithDecisions{Lineage: l, Decisions: append([]*review.Decision{}, ix.OfCitation(l.CitationID)...)}
		}
		err = render.JSON(out, wd)
	case "dot":
		err = render.LineageDOTDecisions(out, ls, orig, ix.OfCitation)
	default:
		if err = render.LineageText(out, ls); err == nil {
			err = render.LineageDecisions(out, ls, ix.OfCitation)
		}
	}
	if err != nil {
		return err
	}
	return out.Flush()
}

// first returns the first of args, or "".
func first(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return args[0]
}
