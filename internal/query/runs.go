package query

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/vocab"
)

// Run statuses, the values of pg:runStatus.
const (
	// RunRunning is written when a run starts. A run that has no other
	// status was killed, or is still going.
	RunRunning = "running"
	// RunComplete is added when a run finishes.
	RunComplete = "complete"
	// RunInterrupted is added when a resolve run is cancelled: the
	// retrievals it finished are recorded, the others are not.
	RunInterrupted = "interrupted"
)

// Run is an ingest or resolve run, with the status RunStatus decides.
type Run struct {
	Node      string `json:"run"`
	Kind      string `json:"kind"` // "ingest" or "resolve"
	StartedAt string `json:"started_at"`
	Status    string `json:"status"`
}

// RunStatus decides the status of a run from every pg:runStatus value it
// carries. The store is append-only, so a finished run keeps the
// "running" it started with beside the status it ended with, and the
// values come back in no particular order. A run is complete when it
// has "complete", whatever else it has; otherwise interrupted when it has
// "interrupted"; otherwise running (killed, or still going). This is the
// one place that rule is written (ontology/MODEL.md states it).
func RunStatus(values []string) string {
	switch {
	case slices.Contains(values, RunComplete):
		return RunComplete
	case slices.Contains(values, RunInterrupted):
		return RunInterrupted
	default:
		return RunRunning
	}
}

// incompleteRuns returns the runs that are not complete.
func incompleteRuns(runs []Run) []Run {
	out := []Run{}
	for _, r := range runs {
		if r.Status != RunComplete {
			out = append(out, r)
		}
	}
	return out
}

// runWarnings says, for each incomplete run, what the results may miss.
func runWarnings(runs []Run) []string {
	var out []string
	for _, r := range runs {
		switch {
		case r.Kind == "ingest":
			out = append(out, fmt.Sprintf("ingest run %s (started %s) never recorded its completion: it was interrupted, and what it had not written is missing from these results (ingest the same input again to complete it)", r.Node, r.StartedAt))
		case r.Status == RunInterrupted:
			out = append(out, fmt.Sprintf("resolve run %s (started %s) was interrupted: the retrievals it had not finished are missing (resolve again)", r.Node, r.StartedAt))
		default:
			out = append(out, fmt.Sprintf("resolve run %s (started %s) never recorded its end: it was killed, and the retrievals it had not finished are missing (resolve again)", r.Node, r.StartedAt))
		}
	}
	return out
}

// runClasses are the run classes, with their kind.
var runClasses = []struct{ class, kind string }{{vocab.IngestRun, "ingest"}, {vocab.ResolveRun, "resolve"}}

// sortRuns puts runs in start order.
func sortRuns(runs []Run) {
	slices.SortFunc(runs, func(a, b Run) int {
		return cmp.Or(strings.Compare(a.StartedAt, b.StartedAt), strings.Compare(a.Node, b.Node))
	})
}

// runs reads every ingest and resolve run as the lineage reader does
// (reader.runs, the one builder of Run): runs are few, so node by node.
func (l *loader) runs() ([]Run, error) { return l.reader().runs() }

// runs reads every ingest and resolve run, node by node. Load reads them
// through it too (loader.runs).
func (r *reader) runs() ([]Run, error) {
	var out []Run
	for _, c := range runClasses {
		nodes, err := r.subjects(vocab.RDFType, graph.IRI(c.class))
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if err := r.node(n); err != nil {
				return nil, err
			}
			out = append(out, Run{Node: n, Kind: c.kind, StartedAt: r.one(vocab.ProvStartedAtTime, n), Status: RunStatus(r.all(vocab.RunStatus, n))})
		}
	}
	sortRuns(out)
	return out, nil
}
