package ingest

import (
	"strconv"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/vocab"
)

// runStarted returns the quads that record the start of an ingest run:
// its types, start time, "running" status, input digest and agent, and the
// policy it used when there is one.
func runStarted(run graph.Term, start, inputDigest string, policy graph.Term) []graph.Quad {
	q := []graph.Quad{
		{S: run, P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.IngestRun)},
		{S: run, P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.ProvActivity)},
		{S: run, P: graph.IRI(vocab.ProvStartedAtTime), O: graph.Literal(start, graph.XSDDateTime)},
		{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String("running")},
		{S: run, P: graph.IRI(vocab.InputDigest), O: graph.String(inputDigest)},
		{S: run, P: graph.IRI(vocab.ProvWasAssociatedWith), O: citestore.AgentIRI},
	}
	if !policy.IsZero() {
		q = append(q, graph.Quad{S: run, P: graph.IRI(vocab.ProvUsed), O: policy})
	}
	return q
}

// runCompleted returns the quads that record a run's completion. Until
// they are written, the run shows as unfinished.
func runCompleted(run graph.Term, end time.Time, records int) []graph.Quad {
	return []graph.Quad{
		{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String("complete")},
		{S: run, P: graph.IRI(vocab.ProvEndedAtTime), O: graph.Literal(end.UTC().Format(time.RFC3339Nano), graph.XSDDateTime)},
		{S: run, P: graph.IRI(vocab.Records), O: graph.Literal(strconv.Itoa(records), graph.XSDInteger)},
	}
}

// findUnfinishedRDFRun returns an RDF load of the same input that never
// recorded its completion. RDF loads use no policy, which tells them apart
// from JSON Lines runs of the same bytes.
func findUnfinishedRDFRun(st *graph.Store, inputDigest string) (graph.Term, bool, error) {
	runs, err := st.Subjects(graph.IRI(vocab.InputDigest), graph.String(inputDigest))
	if err != nil {
		return graph.Term{}, false, err
	}
	for _, run := range runs {
		done, err := st.Has(graph.Quad{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String("complete")})
		if err != nil {
			return graph.Term{}, false, err
		}
		policies, err := st.Objects(run, graph.IRI(vocab.ProvUsed))
		if err != nil {
			return graph.Term{}, false, err
		}
		ingestRun, err := st.Has(graph.Quad{S: run, P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.IngestRun)})
		if err != nil {
			return graph.Term{}, false, err
		}
		if !done && len(policies) == 0 && ingestRun {
			return run, true, nil
		}
	}
	return graph.Term{}, false, nil
}
