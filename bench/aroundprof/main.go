// Command aroundprof times, in process, what a bounded server reads for
// each page of the review queue: the group records of -pages pages of
// -limit groups, following the queue, and each page's groups read whole
// from the grouping view (query.GroupsAround, every member with its
// detail), with the file's mapped pages kept under -mapped MiB while it
// reads (graph.Store.WatchMapped; 0 leaves them all mapped) or read by
// pread (-once). It prints, for each page, its groups, their members,
// the time, and the process's peak resident memory, anonymous memory and
// mapped file pages; and before the pages, the mapped pages after each
// step a bounded server takes at start.
//
// Usage: aroundprof [-limit 100] [-pages 20] [-mapped MiB] [-once] [-cpuprofile FILE] DB
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/review"
	"github.com/provgraph/provgraph/internal/service"
)

func main() {
	limit := flag.Int("limit", 100, "groups a page")
	pages := flag.Int("pages", 20, "pages of the queue, from the first")
	mapped := flag.Int64("mapped", 0, "MiB of the file kept mapped while a page is read (0: no limit)")
	once := flag.Bool("once", false, "read by pread, as a one-shot command does (graph.Options.ReadOnce), not through the mapping")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the pages' reads to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: aroundprof [-limit 100] [-pages 20] [-mapped MiB] [-once] [-cpuprofile FILE] DB")
		os.Exit(2)
	}
	ctx := context.Background()
	st, err := graph.Open(flag.Arg(0), &graph.Options{ReadOnly: true, ReadOnce: *once, MappedLimit: *mapped << 20})
	check(err)
	defer st.Close()
	memory("open")
	cs := citestore.New(st)
	pol, err := service.ViewPolicy(ctx, cs, "")
	check(err)
	memory("policy")
	ok, err := query.ViewUsable(ctx, cs, pol.Digest)
	check(err)
	if !ok {
		check(fmt.Errorf("%s keeps no usable grouping view of policy %s", flag.Arg(0), pol))
	}
	memory("view usable")
	rs := cs.Records(pol.Digest, 0)
	_, complete, _, err := rs.State(ctx)
	check(err)
	if !complete {
		check(fmt.Errorf("%s keeps no group records: provgraph queue --build --db %s", flag.Arg(0), flag.Arg(0)))
	}
	t, err := rs.Totals(ctx, nil)
	check(err)
	memory(fmt.Sprintf("records' totals (%d groups, %d queued)", t.Groups, t.Queued))
	_, err = review.Load(ctx, st)
	check(err)
	memory("decisions")
	if *prof != "" {
		f, err := os.Create(*prof)
		check(err)
		check(pprof.StartCPUProfile(f))
		defer pprof.StopCPUProfile()
	}
	after := ""
	for i := range *pages {
		recs, err := rs.Queue(ctx, after, *limit)
		check(err)
		if len(recs) == 0 {
			break
		}
		var ids []string
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		after = ids[len(ids)-1]
		start := time.Now()
		done := func() {}
		if *mapped > 0 {
			done = st.WatchMapped()
		}
		_, gs, _, err := query.GroupsAround(ctx, cs, pol.Digest, ids, nil, query.GroupOptions{MinSize: 1, Review: true, Detail: true})
		done()
		check(err)
		members := 0
		for _, g := range gs {
			members += len(g.Members)
		}
		memory(fmt.Sprintf("page %d: %d groups, %d members, %v", i, len(gs), members, time.Since(start).Round(time.Millisecond)))
	}
}

// memory prints what with the process's VmHWM, RssAnon and RssFile.
func memory(what string) {
	b, _ := os.ReadFile("/proc/self/status")
	var m []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, f := range []string{"VmHWM", "RssAnon", "RssFile"} {
			if strings.HasPrefix(l, f+":") {
				m = append(m, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	fmt.Printf("%s\t%s\n", what, strings.Join(m, ", "))
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "aroundprof:", err)
		os.Exit(1)
	}
}
