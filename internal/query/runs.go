package query

import (
	"fmt"

	"github.com/provgraph/provgraph/internal/store"
)

// The run statuses, Run and RunStatus are internal/store's: a backend
// reads the runs (store.Catalog).
const (
	RunRunning     = store.RunRunning
	RunComplete    = store.RunComplete
	RunInterrupted = store.RunInterrupted
)

// RunStatus decides the status of a run from its pg:runStatus values
// (store.RunStatus).
func RunStatus(values []string) string { return store.RunStatus(values) }

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
