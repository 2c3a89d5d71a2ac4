package query

import (
	"strconv"

	"github.com/provgraph/provgraph/internal/extract"
	"github.com/provgraph/provgraph/internal/model"
)

// This file is the read side of the content evidence resolve and extract
// record (ontology/MODEL.md, "Content evidence"): each retrieval's
// extractions, each citation's passage checks, and which retrievals count
// as content evidence at all.

// successful is Successful of a retrieval's outcome, status and current
// extraction (nil for none).
func successful(outcome, status string, x *Extraction) bool {
	soft := ""
	if x != nil {
		soft = x.SoftError
	}
	return model.Successful(outcome, status, soft)
}

// whyUnsuccessful says why r is not content evidence.
func whyUnsuccessful(r *Retrieval) string {
	switch x := r.Current(); {
	case r.Outcome != "" && r.Outcome != model.OutcomeOK:
		return "outcome " + r.Outcome
	case x != nil && x.SoftError != "":
		return x.SoftError
	default:
		return "status " + string(r.FinalStatus)
	}
}

// passage is the check of c's cited_text against the current extraction of
// its latest successful retrieval that has one, nil when there is none.
func passage(c *Citation) *Passage { return c.CheckedPassage() }

// textEvidence is what grouping compares of a successful retrieval: the
// current extraction's text digest and SimHash.
func textEvidence(r *Retrieval) (digest string, sim uint64, hasSim bool) {
	x := r.Current()
	if x == nil {
		return "", 0, false
	}
	if x.SimHash != "" {
		if v, err := strconv.ParseUint(x.SimHash, 16, 64); err == nil {
			sim, hasSim = v, true
		}
	}
	return x.TextDigest, sim, hasSim
}

// near reports whether two SimHashes are near-identical
// (extract.NearThreshold), and their distance.
func near(a, b uint64) (int, bool) {
	d := extract.Distance(a, b)
	return d, d <= extract.NearThreshold
}
