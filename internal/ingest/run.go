package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
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

// linesWritten is the quad that records, in the transaction of a batch,
// that the run has written every line of its input up to line.
func linesWritten(run graph.Term, line int) graph.Quad {
	return graph.Quad{S: run, P: graph.IRI(vocab.LinesWritten), O: graph.Literal(strconv.Itoa(line), graph.XSDInteger)}
}

// resumeFrom returns how many lines of the input f an unfinished run of
// it under policy has written (pg:linesWritten, its largest value), 0
// when there is no such run or it wrote no batch that says so, and the
// digest of f it found the run by, which the validation pass's must
// equal (the lines skipped are that input's). Only when
// the database holds an unfinished ingest run does it read f to digest it
// (and so find the run of this input): a fresh ingest pays nothing.
//
// Why: a run resumed after an interruption used to look up the stored
// digest of every citation id it had written and add every batch again,
// found stored quad by quad. At 30M citations interrupted at 19.2M, the
// lookups alone took more than 24 minutes.
func resumeFrom(st *graph.Store, f *os.File, policy graph.Term) (int, string, error) {
	if st == nil || policy.IsZero() {
		return 0, "", nil
	}
	runs, err := st.Subjects(graph.IRI(vocab.RunStatus), graph.String("running"))
	if err != nil {
		return 0, "", err
	}
	var open []graph.Term
	for _, run := range runs {
		done, err := st.Has(graph.Quad{S: run, P: graph.IRI(vocab.RunStatus), O: graph.String("complete")})
		if err != nil {
			return 0, "", err
		}
		if done {
			continue
		}
		marks, err := st.Objects(run, graph.IRI(vocab.LinesWritten))
		if err != nil {
			return 0, "", err
		}
		if len(marks) > 0 {
			open = append(open, run)
		}
	}
	if len(open) == 0 {
		return 0, "", nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, 1<<62)); err != nil {
		return 0, "", fmt.Errorf("digesting the input to find the run it resumes: %w", err)
	}
	// The same digest as the validation pass's (validateLines): of every
	// byte of the file.
	digest := "sha256:" + hex.EncodeToString(h.Sum(nil))
	run, ok, err := findUnfinishedRun(st, digest, policy)
	if err != nil || !ok {
		return 0, "", err
	}
	marks, err := st.Objects(run, graph.IRI(vocab.LinesWritten))
	if err != nil {
		return 0, "", err
	}
	most := 0
	for _, m := range marks {
		n, err := strconv.Atoi(m.Value)
		if err != nil || n < 0 {
			return 0, "", fmt.Errorf("%w: ingest run %s says it has written %q lines", graph.ErrCorrupt, run.Value, m.Value)
		}
		most = max(most, n)
	}
	return most, digest, nil
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
