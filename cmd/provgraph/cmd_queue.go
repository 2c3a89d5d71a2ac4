package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/render"
	"github.com/provgraph/provgraph/internal/service"
)

func newQueueCommand() *cobra.Command {
	var o dbOptions
	var req service.QueueRequest
	var format string
	var build bool
	cmd := &cobra.Command{
		Use:   "queue [flags]",
		Short: "A page of the review queue, or the counts by verdict, from the group records",
		Long: `Queue answers from the group records the database keeps beside a policy's
grouping view, one record per group under one --max-shared: a page of the
review queue, or with --counts the number of groups by verdict, in
milliseconds whatever the database size, without grouping it.

The queue is the groups 'provgraph groups' lists under its defaults
(--min-size 2, --review-relations), in its order (by the group's smallest
key): a page is --limit of them after the group --after names (the last id
of the previous page). Each group is the header line 'provgraph groups'
prints for it (id, verdict, members, smallest key), and a line "keys ..."
when it has more than one key; --format json gives {"policy", "groups": [{"id",
"key", "keys", "members", "verdict", "review_relation"}], "next"} and with
--counts {"policy", "counts"}.

The records are built by 'provgraph queue --build': a full grouping of the
database, read from its grouping view a batch of keys at a time as
'provgraph groups' reads it (without a view, every citation grouped in
memory), --max-shared and --policy choosing which records. The records
are spooled to a temporary file in $TMPDIR, unlinked as soon as it is
made, and written at the end (78 s and 1.4 GiB at ten million citations). From then on, every ingest, resolve,
extract and renormalize run marks the keys whose view rows it writes
(in the transaction of its quads) and, at its end, refreshes the records
of the groups those keys can change, when they are at most 1000 keys or at
most 10 % of the records; past that it drops the records, saying so on
standard error with the command that builds them again. A view rebuild
drops them too. A run killed before its end leaves the records behind its
keys: queue refuses them until the run is run again (which refreshes them)
or they are built. 'provgraph check' verifies the records (see its help).

Without records (never built, dropped, or behind), queue prints nothing,
says how to build them and exits 1: it does not fall back to a full
grouping, which is what 'provgraph groups' is for.

` + exitHelp(
			exitLineOK,
			"  1  the database keeps no usable group records for the policy and\n     --max-shared (the message says how to build them)",
			"  2  usage error: bad flag, no such policy, or an --after id that is not\n     in the queue",
			"  3  I/O or internal error, including a missing database file",
			exitLineLocked,
			exitLineCorrupt),
		Example: `  provgraph queue --build --db example.db
  provgraph queue --db example.db --limit 20
  provgraph queue --db example.db --limit 20 --after g-0123456789ab
  provgraph queue --db example.db --counts --format json`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usagef("--format %q: want text or json", format)
			}
			if req.Limit < 0 {
				return usagef("--limit %d: want 0 (all) or more", req.Limit)
			}
			if req.MaxShared < 0 {
				return usagef("--max-shared %d: want 0 (the default) or more", req.MaxShared)
			}
			out := cmd.OutOrStdout()
			if build {
				if req.Counts || req.After != "" || cmd.Flags().Changed("limit") {
					return usagef("--build takes only --db, --policy and --max-shared")
				}
				start := time.Now()
				pol, n, err := o.service().BuildRecords(cmd.Context(), req.Policy, req.MaxShared)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "group records of policy %s, --max-shared %d built: %s, %s\n", render.EscapeText(pol.String()), maxSharedOrDefault(req.MaxShared), render.Plural(n, "group"), time.Since(start).Round(time.Millisecond))
				return nil
			}
			res, err := o.service().Queue(cmd.Context(), req)
			if err != nil {
				return err
			}
			if format == "json" {
				return writeQueueJSON(out, res, req)
			}
			if req.Counts {
				for _, k := range slices.Sorted(mapKeysOf(res.Counts)) {
					fmt.Fprintf(out, "%s\t%d\n", render.EscapeText(k), res.Counts[k])
				}
				return nil
			}
			for _, r := range res.Records {
				// The header line provgraph groups prints for the group.
				fmt.Fprintf(out, "%s  %s  %s  %s\n", r.ID, render.EscapeText(r.Verdict), render.Plural(r.Members, "member"), render.QuoteIfNeeded(r.Key))
				if len(r.Keys) > 1 {
					keys := make([]string, len(r.Keys))
					for i, k := range r.Keys {
						keys[i] = render.QuoteIfNeeded(k)
					}
					fmt.Fprintf(out, "  keys %s\n", strings.Join(keys, " "))
				}
			}
			if req.Limit > 0 && len(res.Records) == req.Limit {
				fmt.Fprintf(out, "next page: --after %s\n", res.Records[len(res.Records)-1].ID)
			}
			return nil
		},
	}
	o.addFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&req.Policy, "policy", "", "the policy whose records to read: NAME@VERSION, NAME or a digest (default: the policy of the latest ingest or renormalize run)")
	f.IntVar(&req.MaxShared, "max-shared", 0, "the --max-shared the records were built under, as provgraph groups takes it (0: the default)")
	f.StringVar(&req.After, "after", "", "start after the group with this id (the last of the previous page)")
	f.IntVar(&req.Limit, "limit", 50, "groups per page (0: all)")
	f.BoolVar(&req.Counts, "counts", false, "print the number of groups by verdict, and of groups, instead of a page")
	f.StringVar(&format, "format", "text", "output format: text or json")
	f.BoolVar(&build, "build", false, "build the records with a full grouping, read from the grouping view in bounded memory, replacing any")
	return cmd
}

func maxSharedOrDefault(n int) int {
	if n <= 0 {
		return model.DefaultMaxShared
	}
	return n
}

func mapKeysOf(m map[string]int) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

type queueGroupJSON struct {
	ID             string   `json:"id"`
	Key            string   `json:"key"`
	Keys           []string `json:"keys"`
	Members        int      `json:"members"`
	Verdict        string   `json:"verdict"`
	ReviewRelation bool     `json:"review_relation"`
}

func writeQueueJSON(out interface{ Write([]byte) (int, error) }, res *service.QueueResult, req service.QueueRequest) error {
	v := map[string]any{"policy": res.Policy.String()}
	if req.Counts {
		v["counts"] = res.Counts
	} else {
		groups := make([]queueGroupJSON, 0, len(res.Records))
		for _, r := range res.Records {
			groups = append(groups, queueGroupJSON{r.ID, r.Key, r.Keys, r.Members, r.Verdict, r.ReviewRelation})
		}
		v["groups"] = groups
		next := ""
		if req.Limit > 0 && len(res.Records) == req.Limit {
			next = res.Records[len(res.Records)-1].ID
		}
		v["next"] = next
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
