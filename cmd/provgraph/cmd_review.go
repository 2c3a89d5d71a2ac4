package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
)

// addFilterFlags adds the flags that select, order and page groups, shared
// by groups and review list.
func addFilterFlags(cmd *cobra.Command, f *service.GroupFilter) {
	fs := cmd.Flags()
	fs.StringVar(&f.ID, "id", "", "list only the group with this id")
	fs.StringVar(&f.Key, "key", "", "list only groups with this comparison key")
	fs.StringVar(&f.Domain, "domain", "", "list only groups with a member key under this registrable domain (example.com)")
	fs.StringVar(&f.Engine, "engine", "", "list only groups with a member cited by this answer engine")
	fs.StringVar(&f.Since, "since", "", "list only groups with a member observed at or after this time (RFC 3339, or a date)")
	fs.StringVar(&f.State, "state", "", "list only groups in this review state: "+strings.Join(review.States, ", "))
	fs.StringVar(&f.Sort, "sort", "", "order: size (largest first) or risk (conflict, relations to review, needs-content-check, then size); default: the groups' own order")
	fs.IntVar(&f.Limit, "limit", 0, "list at most this many groups and print the cursor of the next page (0: all)")
	fs.StringVar(&f.Cursor, "cursor", "", "continue after the page that printed this cursor (same filters)")
}

// filterSet reports whether any filter flag was given.
func filterSet(cmd *cobra.Command) bool {
	for _, n := range []string{"id", "key", "domain", "engine", "since", "state", "sort", "limit", "cursor"} {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

const reviewHelp = `Decisions (recorded as W3C PROV, append-only; a later decision about the
same citations revises the earlier one, nothing is deleted):
  same        the members cite one resource
  different   split: they must not be counted together
  related     related resources; --relation names the kind: ` + "format_of,\n              mirror_of, syndication_of, archive_of, other" + `
  unsure      looked at, undecided

A decision attaches to the member citations and records a digest of the
evidence shown (keys, policy, retrievals, content hashes, relations). When
the group gains or loses members or evidence, the decision is shown as
stale, with what changed. Review states: unreviewed, decided, stale.`

func newReviewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "review",
		Short: "List review groups with their decisions, show one, record a decision",
		Long: `Review is the command-line side of the review workbench (provgraph serve):
list the review queue, show one group with its decisions and their history,
and record a reviewer's decision.

` + reviewHelp,
		Args: exactArgs(0),
	}
	cmd.AddCommand(newReviewListCommand(), newReviewShowCommand(), newReviewDecideCommand())
	return cmd
}

type reviewOptions struct {
	dbOptions
	policy    string
	format    string
	maxShared int
}

func (o *reviewOptions) addFlags(cmd *cobra.Command) {
	o.dbOptions.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&o.policy, "policy", "", "the policy whose groups to review: NAME@VERSION, NAME or a digest (default: the policy used by the latest ingest or renormalize run)")
	f.StringVar(&o.format, "format", "table", "output format: table or json")
	f.IntVar(&o.maxShared, "max-shared", model.DefaultMaxShared, "as for groups")
}

func (o *reviewOptions) check() error {
	if o.format != "table" && o.format != "json" {
		return usagef("--format %q: want table or json", o.format)
	}
	return nil
}

// groupOptions are the options of the review queue: every group with at
// least two members, and the smaller ones in a relation to review.
func (o *reviewOptions) groupOptions() query.GroupOptions {
	return query.GroupOptions{MaxShared: o.maxShared, MinSize: 2, Review: true}
}

var reviewExit = exitHelp(
	exitLineOK,
	"  2  usage error: bad flag or argument, or no such policy in the database",
	"  3  I/O or internal error, including a missing database file",
	exitLineLocked,
	exitLineCorrupt)

var reviewGroupExit = exitHelp(
	exitLineOK,
	"  1  no such group under the policy",
	"  2  usage error: bad flag or argument, or no such policy in the database",
	"  3  I/O or internal error, including a missing database file",
	exitLineLocked,
	exitLineCorrupt)

func newReviewListCommand() *cobra.Command {
	var o reviewOptions
	var f service.GroupFilter
	var decisions bool
	var workMem, read string
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List the review queue: groups in risk order with their review state",
		Long: `List prints the review queue: the groups that groups lists (at least two
members, or in a relation to review), in risk order (conflict, relations
to review, needs-content-check, larger groups first) unless --sort says
otherwise, each with its review state and latest decision. The filters are
those of groups. --decisions lists every stored decision instead, newest
first.

Memory: the groups are read as groups reads them (--read; from the
grouping view a batch of keys at a time by default), and each one listed
is written to a temporary file in $TMPDIR (unlinked as soon as it is
made, so nothing is left behind on any exit) while only its place and
risk are held, 24 bytes a group; the page is then read back in risk
order. Ten million citations: about 410,000 groups, 10 MB held.

` + reviewExit,
		Example: `  provgraph review list --db example.db --state unreviewed --limit 20
  provgraph review list --db example.db --decisions --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			if f.Sort == "" {
				f.Sort = "risk"
			}
			if err := f.Check(); err != nil {
				return err
			}
			if decisions {
				ix, err := o.service().Decisions(cmd.Context())
				if err != nil {
					return err
				}
				return render.Decisions(cmd.OutOrStdout(), o.format, ix.All)
			}
			wm, err := workMemFlag(workMem)
			if err != nil {
				return err
			}
			how, err := groupsRead(read, wm)
			if err != nil {
				return err
			}
			opts := o.groupOptions()
			opts.Detail = f.NeedsDetail()
			rs, err := o.service().ReviewedFrom(cmd.Context(), o.policy, opts, how)
			if err != nil {
				return err
			}
			defer rs.Close()
			return render.ReviewedStream(cmd.Context(), cmd.OutOrStdout(), o.format, rs.Set.Policy(), func(encode func([]byte, *query.Group, *review.Status) []byte, write func([]byte) error) (render.Listed, error) {
				l, err := rs.Write(cmd.Context(), f, encode, write)
				return render.Listed{Shown: l.Shown, Total: l.Total, Next: l.Next}, err
			})
		},
	}
	o.addFlags(cmd)
	addFilterFlags(cmd, &f)
	cmd.Flags().BoolVar(&decisions, "decisions", false, "list every stored decision, newest first, instead of groups")
	cmd.Flags().StringVar(&workMem, "work-mem", "", "the memory review list may take, e.g. 8GiB: the view's reads keep half of it mapped, and without a view more citations than it holds at 400 bytes each are refused (default $PROVGRAPH_WORK_MEM, else three quarters of the machine's or cgroup's memory)")
	cmd.Flags().StringVar(&read, "read", "auto", "how to read the groups, as for groups: scan (every citation at once), view (the grouping view a batch of keys at a time: bounded memory) or auto (the view unless the citations fit in --work-mem)")
	return cmd
}

func newReviewShowCommand() *cobra.Command {
	var o reviewOptions
	cmd := &cobra.Command{
		Use:   "show [flags] GROUP-ID",
		Short: "Show one group with its review state and the history of its decisions",
		Long: `Show prints one review group as groups does, then its review state (the
latest decision; stale, with what changed) and every decision about any of
its members, newest first; then the decisions about pairs of citations with
a member in the group and about relations with the group at either end
(decide --pair, --between), each with its own state and history.

It reads only the groups it shows from the database's grouping view (the
group's neighbourhood, as groups --id does) when the database keeps one,
and groups every citation otherwise (seconds and GBs at a million).

` + reviewGroupExit,
		Example: `  provgraph review show --db example.db g-6e48bcc4a04d`,
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			opts := o.groupOptions()
			opts.MinSize = 1
			st, err := o.open(true)
			if err != nil {
				return err
			}
			defer st.Close()
			r, g, err := service.ShowReviewed(cmd.Context(), st.Quads, o.policy, opts, args[0])
			if err != nil {
				return err
			}
			if g == nil {
				return service.InputError{Err: fmt.Errorf("%w %q under policy %s in %s", service.ErrNoGroup, args[0], r.Report.Policy.String(), o.db)}
			}
			return render.ReviewShow(cmd.OutOrStdout(), o.format, r.Report.Policy, g, r.Status(g), r.Subjects(g))
		},
	}
	o.addFlags(cmd)
	return cmd
}

func newReviewDecideCommand() *cobra.Command {
	var o reviewOptions
	var req service.DecideRequest
	var pair, between bool
	cmd := &cobra.Command{
		Use:   "decide [flags] GROUP-ID | --pair CITATION-A CITATION-B | --between GROUP-A GROUP-B, then same|different|related|unsure",
		Short: "Record a reviewer's decision about a group, a pair of citations or a relation between groups",
		Long: `Decide records a decision, with the reviewer (--reviewer, or the
PROVGRAPH_REVIEWER environment variable) and the rationale, and prints it.
It is stored in one transaction: when decide returns, it is committed; when
it fails, nothing is written.

A decision is about one of three subjects:
  GROUP-ID                        a review group: the group's review state
                                  follows its latest decision
  --pair CITATION-A CITATION-B    two citations, whichever groups they are
                                  in: whether these two cite one resource
  --between GROUP-A GROUP-B       the relation from GROUP-A to GROUP-B
                                  (related --relation mirror_of: GROUP-A is
                                  a mirror of GROUP-B)
A decision about a pair or a relation is listed on the groups' pages (review
show) apart from the group's own history, and never changes a group's
review state. Each subject has its own revisions: a later decision about
the same pair, or the same two groups in either direction, revises the
earlier one. A pair is stale when either citation's evidence changed, a
relation when either group's did.

The groups the decision is about are read from the database's grouping
view (their neighbourhoods only) when it keeps one, and by grouping every
citation otherwise; the evidence digest recorded is the same.

` + reviewHelp + `

` + reviewGroupExit,
		Example: `  provgraph review decide --db example.db g-6e48bcc4a04d same --reviewer alice --rationale "same W3C page"
  provgraph review decide --db example.db g-9e140c1f1f94 related --relation syndication_of --related-to g-2af4f6b1aadd --reviewer bob
  provgraph review decide --db example.db --pair c-17 c-42 different --reviewer alice --rationale "two editions"
  provgraph review decide --db example.db --between g-9e140c1f1f94 g-2af4f6b1aadd related --relation mirror_of --reviewer bob`,
		Args: func(cmd *cobra.Command, args []string) error {
			if pair && between {
				return usagef("--pair and --between: give one subject")
			}
			if pair || between {
				return exactArgs(3)(cmd, args)
			}
			return exactArgs(2)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.check(); err != nil {
				return err
			}
			switch {
			case pair:
				req.Subject, req.Citations, req.Decision = review.SubjectPair, args[:2], args[2]
			case between:
				if req.RelatedTo != "" {
					return usagef("--related-to: with --between, the other group is GROUP-B")
				}
				req.Subject, req.GroupID, req.RelatedTo, req.Decision = review.SubjectRelation, args[0], args[1], args[2]
			default:
				req.GroupID, req.Decision = args[0], args[1]
			}
			if req.Reviewer == "" {
				req.Reviewer = os.Getenv("PROVGRAPH_REVIEWER")
			}
			if req.Reviewer == "" {
				return usagef("--reviewer: give the reviewer's name (or set PROVGRAPH_REVIEWER)")
			}
			st, err := o.open(false)
			if err != nil {
				return err
			}
			defer st.Close()
			opts := o.groupOptions()
			opts.MinSize = 1
			var groups []string
			for _, id := range []string{req.GroupID, req.RelatedTo} {
				if id != "" {
					groups = append(groups, id)
				}
			}
			r, err := service.LoadReviewedAround(cmd.Context(), st.Quads, o.policy, opts, groups, req.Citations)
			if err != nil {
				return err
			}
			d, err := service.Decide(cmd.Context(), st.Quads, r, req, time.Now())
			if err != nil {
				return err
			}
			if err := st.Close(); err != nil {
				return err
			}
			return render.Decisions(cmd.OutOrStdout(), o.format, []*review.Decision{d})
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&req.Reviewer, "reviewer", "", "the reviewer's name (default: $PROVGRAPH_REVIEWER)")
	f.StringVar(&req.Rationale, "rationale", "", "why, in words (at most 4096 bytes)")
	f.StringVar(&req.Relation, "relation", "", "with related: format_of, mirror_of, syndication_of, archive_of or other")
	f.StringVar(&req.RelatedTo, "related-to", "", "with related about a group: the id of the group at the other end")
	f.BoolVar(&pair, "pair", false, "decide about two citations: the arguments are CITATION-A CITATION-B DECISION")
	f.BoolVar(&between, "between", false, "decide about the relation between two groups: the arguments are GROUP-A GROUP-B DECISION")
	return cmd
}
