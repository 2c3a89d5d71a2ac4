package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
)

func newRenormalizeCommand() *cobra.Command {
	var o dbOptions
	var policy, tmp, progress string
	var noCompact bool
	cmd := &cobra.Command{
		Use:   "renormalize --policy FILE [flags]",
		Short: "Normalize every stored citation under another policy, beside the earlier normalizations",
		Long: `Renormalize adds, for every citation in the database, a normalization
activity and comparison key under the given policy. Earlier normalizations
are never replaced, so groups and counts under an earlier policy stay
reproducible: groups, lineage and stats take --policy NAME@VERSION to choose,
and policy-diff compares two. Without --policy they use the policy of the
most recent ingest or renormalize run, so after renormalize that is its
policy. It writes the grouping view of its policy (see 'provgraph view'):
kept current batch by batch if the database keeps one, else built once every
normalization is written. As after ingest, quad indexes with 16 runs or
more to merge are then compacted (as 'provgraph compact' does), and a view
whose rows end in 16 sorted runs or more into one run per map (as
'provgraph view compact' does); --no-compact names those commands instead.

Memory does not grow with the database: the citations are listed to a
temporary file in --tmp (default $TMPDIR, else /tmp; unlinked as soon as
it is made, so that no exit leaves it), about 150 bytes a citation, and
read back a few thousand at a time.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag, or a missing or invalid --policy",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph renormalize --db example.db --policy my-policy.toml
  provgraph policy-diff --db example.db provgraph-default my-team@3`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if policy == "" {
				return usagef("--policy is required: the policy to normalize under")
			}
			pol, err := service.LoadPolicy(policy)
			if err != nil {
				return err
			}
			if err := tmpDirFlag(tmp); err != nil {
				return err
			}
			if err := validProgress(progress); err != nil {
				return err
			}
			if _, err := os.Stat(o.db); err != nil {
				return fmt.Errorf("renormalize: %w (ingest citations into it first)", err)
			}
			if err := renormalize(cmd, &o, pol, tmp, progress); err != nil {
				return err
			}
			// The store is closed: the compaction opens it again.
			return compactAfterWrite(cmd, "renormalize", &o, "auto", noCompact, pol.Digest())
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&policy, "policy", "", `the policy: "default", "lenient" (in any letter case) or a TOML policy file of at most 1 MiB`)
	cmd.Flags().StringVar(&tmp, "tmp", "", tmpUsage)
	cmd.Flags().StringVar(&progress, "progress", "auto", "progress on standard error: bar (a progress bar for the normalizations, then one for the grouping view when it is built), lines (a line every 10 s, for a run whose standard error is a file or a log), none, or auto (bar on a terminal, none otherwise)")
	cmd.Flags().BoolVar(&noCompact, "no-compact", false, "leave the quad indexes' and the grouping view's runs as written (by default, renormalize ends by merging the quad indexes' runs when one holds 16 or more to merge, as 'provgraph compact' does, and once the view's rows are in 16 runs or more, each of its maps into one, as 'provgraph view compact' does)")
	return cmd
}

func newPolicyDiffCommand() *cobra.Command {
	var o dbOptions
	var format, workMem, read, tmp string
	var maxShared int
	var redact bool
	cmd := &cobra.Command{
		Use:   "policy-diff [flags] A B",
		Short: "List the review groups that merge or split between two policies, and why",
		Long: `Policy-diff compares the review groups of the database under policy A and
policy B (each NAME@VERSION, NAME or a digest; both must be in the database,
see renormalize) and lists every group that merges or splits, with the
citations concerned and the rules applied under only one of the policies,
followed by how the policies themselves differ.

Memory: the groups of A, then those of B, are read as groups reads them
(--read: auto, scan or view, and --work-mem, as for groups: the grouping
view of each policy, a batch of keys at a time, once the citations would
take more than the working memory as a scan), and joined on the citation
ids by sorts on disk, in --tmp (default $TMPDIR, else /tmp; the files are
unlinked as soon as they are made, so that no exit leaves them). What it
holds beyond that is the changes it reports. The policy that renormalize
wrote has a grouping view when the database keeps one; 'provgraph view
rebuild --policy P' writes one for a policy that has none.

` + exitHelp(
			exitLineOK,
			"  2  usage error: bad flag or argument, a policy not in the database, or\n     (--read view, or auto past --work-mem) a policy without a grouping view",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph policy-diff --db example.db provgraph-default test-groups-hostrules@1
  provgraph policy-diff --db big.db --read view --tmp /var/tmp provgraph-default provgraph-lenient`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "table" && format != "json" {
				return usagef("--format %q: want table or json", format)
			}
			if err := tmpDirFlag(tmp); err != nil {
				return err
			}
			wm, err := workMemFlag(workMem)
			if err != nil {
				return err
			}
			how, err := groupsRead(read, wm)
			if err != nil {
				return err
			}
			tuneGCForQueries()
			d, err := o.service().PolicyDiff(cmd.Context(), args[0], args[1], query.GroupOptions{MaxShared: maxShared}, how,
				query.DiskSort{Dir: tmp, Mem: diskSortMem(wm)})
			if err != nil {
				return err
			}
			d = render.RedactIf(redact, d)
			if format == "json" {
				return render.JSON(cmd.OutOrStdout(), d)
			}
			return render.PolicyDiff(cmd.OutOrStdout(), d)
		},
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&format, "format", "table", "output format: table or json")
	cmd.Flags().IntVar(&maxShared, "max-shared", model.DefaultMaxShared, "as for groups")
	cmd.Flags().StringVar(&read, "read", "auto", "how each policy's groups are read, as for groups: scan (every citation at once), view (the grouping view a batch of keys at a time: bounded memory) or auto (the view unless the citations fit in --work-mem)")
	cmd.Flags().StringVar(&workMem, "work-mem", "", "the memory a scan of one policy's groups may take, e.g. 8GiB, as for groups; the sorts take an eighth of it, 128MiB at most (default $PROVGRAPH_WORK_MEM, else three quarters of the machine's or cgroup's memory)")
	cmd.Flags().StringVar(&tmp, "tmp", "", tmpUsage)
	addRedactFlag(cmd, &redact)
	return cmd
}

// diskSortMem is the sorts' working set for a --work-mem of
// workMem (0: not set): an eighth of it, at most query.DefaultSortMem.
func diskSortMem(workMem int64) int64 {
	if workMem <= 0 {
		return query.DefaultSortMem
	}
	return max(1<<20, min(workMem/8, query.DefaultSortMem))
}

// renormalize writes the normalizations of every stored citation under
// pol, and keeps the group records current, in one opening of the store.
func renormalize(cmd *cobra.Command, o *dbOptions, pol *normalize.Policy, tmp, progress string) error {
	st, err := o.open(false)
	if err != nil {
		return err
	}
	defer st.Close()
	tuneGCForWrites()
	opts := ingest.Options{Policy: pol, TempDir: tmp}
	var endProgress func()
	opts.Progress, endProgress = progressFunc(cmd.ErrOrStderr(), progress, "renormalize", "citations")
	sum, err := ingest.Renormalize(cmd.Context(), st.Quads, opts)
	endProgress()
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "renormalize: %s under %s@%s, %s rejected, %s added, %s\n",
		render.Plural(sum.Records, "citation"), render.EscapeText(pol.Name()), render.EscapeText(pol.Version()), render.Plural(sum.URLRejected, "raw URL"), render.Plural(sum.QuadsAdded, "quad"), sum.Elapsed.Round(time.Millisecond))
	if err := service.KeepRecords(cmd.Context(), st.Quads, cmd.ErrOrStderr(), o.db); err != nil {
		return err
	}
	if stats, err := st.Quads.Stats(); err == nil {
		vacuumHint(cmd.ErrOrStderr(), o.db, stats.FreeBytes, stats.FileBytes)
	}
	return nil
}
