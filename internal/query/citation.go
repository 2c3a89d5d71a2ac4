package query

import "github.com/provgraph/provgraph/internal/store"

// The read side's domain values are internal/store's: a backend builds
// them. These aliases keep the names the queries' users (render, service,
// server, export) have always written.
type (
	Citation      = store.Citation
	Normalization = store.Normalization
	Retrieval     = store.Retrieval
	Hop           = store.Hop
	Relation      = store.Relation
	Extraction    = store.Extraction
	DeclaredDate  = store.DeclaredDate
	Passage       = store.Passage
	Span          = store.Span
	PolicyRef     = store.PolicyRef
	Integer       = store.Integer
	Run           = store.Run
)
