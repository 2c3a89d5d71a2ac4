package store

import "slices"

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
