package store

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/provgraph/provgraph/internal/model"
)

// ErrNoView is returned (wrapped) by a GroupView read of a policy whose
// view the backend does not keep: the caller falls back to a scan.
var ErrNoView = errors.New("no grouping view is kept for the policy")

// GroupView reads a policy's grouping view: the facts grouping compares
// of every citation, as one row per citation ordered by comparison key
// then citation id, and postings that find the keys sharing a piece of
// evidence or pointing at a key, so that one group and its neighbourhood
// are found by a few reads instead of a scan. It is derived data, kept by
// the backend as citations are written; every answer equals what a scan
// of the same database says (storetest holds both backends to it).
//
// policyDigest is model.PolicyRef.Digest. Every []string is sorted (byte
// order) and without repeats, nil when nothing matches. Each method but
// HasView returns an error wrapping ErrNoView for a policy without a view.
type GroupView interface {
	// HasView reports whether the backend keeps a complete view of the
	// policy.
	HasView(ctx context.Context, policyDigest string) (bool, error)
	// KeyRows returns the rows of the keyed citations (normalized under
	// the policy, not rejected) whose key is exactly key, in citation id
	// order.
	KeyRows(ctx context.Context, policyDigest, key string) ([]ViewRow, error)
	// RowsAfter returns up to limit rows (every citation: keyed, rejected
	// and unnormalized, the last two with the key "" and so first) in key
	// then citation id order, starting after the row at after (nil: at
	// the first). A full read pages through every citation this way.
	RowsAfter(ctx context.Context, policyDigest string, after *RowPos, limit int) ([]ViewRow, error)
	// KeysOfID returns the keys k of keyed citations whose group id,
	// "g-" and the hex of the first 6 bytes of SHA-256(k), is id.
	KeysOfID(ctx context.Context, policyDigest, id string) ([]string, error)
	// KeysByContent and KeysByDigest return the keys of keyed citations
	// with a successful retrieval (ViewRow.Evidence) with this content
	// hash, or whose current extraction has this text digest.
	KeysByContent(ctx context.Context, policyDigest, hash string) ([]string, error)
	KeysByDigest(ctx context.Context, policyDigest, digest string) ([]string, error)
	// KeysBySimBlock returns the keys of keyed citations with a successful
	// retrieval whose SimHash v (HasSim) has uint16(v >> (16*block)) ==
	// bits, block 0 to 3.
	KeysBySimBlock(ctx context.Context, policyDigest string, block int, bits uint16) ([]string, error)
	// RedirectSources returns the keys s of keyed citations with a
	// same-host redirect (ViewRow.Redirects) whose final URL the policy
	// normalizes to target, s != target.
	RedirectSources(ctx context.Context, policyDigest, target string) ([]string, error)
	// RelationSources returns the keys s of keyed citations with a link
	// (ViewRow.Links) whose URL the policy normalizes to target, s !=
	// target.
	RelationSources(ctx context.Context, policyDigest, target string) ([]string, error)
}

// RowPos is a row's place in a view: its key, then its citation id.
type RowPos struct {
	Key, CitationID string
}

// RowState says how the view's policy treated a citation.
type RowState uint8

// The states of a row.
const (
	RowKeyed        RowState = iota // normalized to Key
	RowRejected                     // normalized, and the policy rejected its raw URL
	RowUnnormalized                 // never normalized under the policy
)

// ViewRow is one citation's row of a view: Row with texts for handles
// (handles do not outlive a scan), and the URLs its relations point at.
type ViewRow struct {
	Key        string // "" unless State is RowKeyed
	CitationID string
	State      RowState
	KeyContent bool // Row.KeyContent
	Related    bool // Row.Related
	// Redirects are Row.Redirects as texts: the final URLs, not their
	// keys, sorted and without repeats.
	Redirects []string
	// Links are the URLs grouping's relations point from the citation
	// at: the final URL of each redirected retrieval (hops and a final
	// URL, any host), each canonical declaration's URL and each relation
	// target; sorted and without repeats.
	Links []string
	// Evidence is Row.Evidence with texts, sorted by CompareViewEvidence.
	Evidence []ViewEvidence
	// Member is the citation as a listed review group shows it (Listed),
	// when the backend keeps it with the row: a full listing then reads
	// no citation. nil when the backend does not (the listing reads the
	// citation); when set, it is Listed of the citation as stored, but
	// for its normalization's Policy, left nil (it is the view's).
	Member *Citation
}

// Listed returns what a listed review group shows of citation c and
// makes its member's reasons and its relations of, and nothing else: the
// id, the raw URL and its fragment; the normalization's key, comparison,
// host rule, rules, removed parameters and error; each retrieval's final
// URL and status, content hash and outcome, its hops (their number, index
// and whether each crossed hosts, not their URLs), canonical
// declarations and current extraction (extractor, text digest, SimHash,
// soft error); the relations; and the passage check the member shows
// (CheckedPassage), against the listed current extraction. Nodes are left
// empty. Two citations with the same Listed list the same in any group.
// A grouping view keeps it per row (ViewRow.Member), so that the full
// listing reads rows, not citations.
func Listed(c *Citation) *Citation {
	out := &Citation{ID: c.ID, Raw: c.Raw}
	if c.Fragment != nil {
		f := *c.Fragment
		out.Fragment = &f
	}
	if n := c.Norm; n != nil {
		out.Norm = &Normalization{Policy: n.Policy, Rules: nonEmpty(n.Rules), ErrorCode: n.ErrorCode, ErrorMessage: n.ErrorMessage,
			Key: n.Key, Compare: n.Compare, HostRule: n.HostRule, RemovedParams: nonEmpty(n.RemovedParams)}
	}
	p := c.CheckedPassage()
	for _, r := range c.Retrievals {
		lr := &Retrieval{FinalURL: r.FinalURL, FinalStatus: r.FinalStatus, ContentHash: r.ContentHash, Outcome: r.Outcome}
		for i, h := range r.Hops {
			lr.Hops = append(lr.Hops, Hop{Index: i, CrossesHost: h.CrossesHost})
		}
		// In one order, without repeats: a listing sorts the relations
		// they make, and a declaration repeated is one node.
		lr.Canonicals = nonEmpty(r.Canonicals)
		slices.SortFunc(lr.Canonicals, func(a, b model.Canonical) int {
			return cmp.Or(cmp.Compare(a.URL, b.URL), cmp.Compare(a.Source, b.Source))
		})
		lr.Canonicals = slices.Compact(lr.Canonicals)
		if x := r.Current(); x != nil {
			lx := &Extraction{Extractor: x.Extractor, TextDigest: x.TextDigest, SimHash: x.SimHash, SoftError: x.SoftError}
			lr.Extractions = []*Extraction{lx}
			if p != nil && p.Against == x {
				lp := &Passage{Found: p.Found, Score: p.Score, Method: p.Method, Extractor: p.Extractor, Against: lx}
				if p.Span != nil {
					sp := *p.Span
					lp.Span = &sp
				}
				out.Passages = []*Passage{lp}
			}
		}
		out.Retrievals = append(out.Retrievals, lr)
	}
	for _, rel := range c.Relations {
		r := *rel
		out.Relations = append(out.Relations, &r)
	}
	slices.SortFunc(out.Relations, compareRelation)
	out.Relations = slices.CompactFunc(out.Relations, func(a, b *Relation) bool { return compareRelation(a, b) == 0 })
	return out
}

// compareRelation orders relations by every field.
func compareRelation(a, b *Relation) int {
	return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Target, b.Target), cmp.Compare(a.Format, b.Format),
		cmp.Compare(a.CapturedAt, b.CapturedAt), cmp.Compare(a.Evidence, b.Evidence))
}

// nonEmpty returns a copy of s, nil when s is empty.
func nonEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return slices.Clone(s)
}

// ViewEvidence is Evidence with texts.
type ViewEvidence struct {
	Retrieval string // the retrieval's node (model.RetrievalIRI)
	Content   string // its content hash, "" for none
	Digest    string // its current extraction's text digest, "" for none
	SimHash   uint64
	HasSim    bool
}

// CompareViewEvidence is the order of ViewRow.Evidence: by content hash,
// text digest, SimHash (absent first), then retrieval.
func CompareViewEvidence(a, b ViewEvidence) int {
	switch {
	case a.Content != b.Content:
		return compareString(a.Content, b.Content)
	case a.Digest != b.Digest:
		return compareString(a.Digest, b.Digest)
	case a.HasSim != b.HasSim:
		return compareBool(a.HasSim, b.HasSim)
	case a.SimHash != b.SimHash:
		if a.SimHash < b.SimHash {
			return -1
		}
		return 1
	}
	return compareString(a.Retrieval, b.Retrieval)
}

func compareString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ViewInfo describes one policy's view, for `provgraph view status` and
// `check`.
type ViewInfo struct {
	Policy   PolicyRef
	Complete bool   // false: a rebuild was interrupted; the view is not used
	Rows     int64  // rows written
	Built    string // how and when it was started: "ingest 2026-...", "rebuild 2026-..."
	// Layout says how a backend keeps the view, for people: for the bbolt
	// backend "sorted runs" (RowRuns of them for the rows) or "B-trees"
	// (a view of format 5, which a rebuild makes sorted runs); "" when the
	// backend has one way only.
	Layout  string
	RowRuns int
	// RowRunsToMerge is how many of those runs a compaction would merge:
	// those written since the last one, and the last one's unless it is
	// settled (a gigabyte or more, which a compaction leaves as it is).
	RowRunsToMerge int
	// Members says whether the rows carry member records
	// (ViewRow.Member).
	Members bool
}

// ViewFields are the fields ScanViewRows scans.
const ViewFields = FieldKey | FieldFinalURL | FieldRelations | FieldEvidence | FieldRetrieval | FieldCitation

// ScanViewRows scans every citation under the policy and calls fn with
// its view row, in citation id order: what a view must hold, made from
// the scan grouping reads (Row) and, for Links, the scan's citations. A
// backend builds or checks its view with it; Memory answers GroupView
// from it.
func ScanViewRows(ctx context.Context, s Scanner, policyDigest string, fn func(ViewRow) error) error {
	type scanned struct {
		row       ViewRow
		redirects []Handle
		evidence  []Evidence
		key       Handle
	}
	var rows []scanned
	texts, err := s.Scan(ctx, policyDigest, ViewFields, func(r *Row) error {
		v := scanned{row: ViewRow{CitationID: r.ID, KeyContent: r.KeyContent, Related: r.Related}, key: r.Key,
			redirects: append([]Handle(nil), r.Redirects...), evidence: append([]Evidence(nil), r.Evidence...)}
		switch {
		case r.Key != 0:
			v.row.State = RowKeyed
		case r.Rejected:
			v.row.State = RowRejected
		default:
			v.row.State = RowUnnormalized
		}
		rows = append(rows, v)
		return nil
	})
	if err != nil {
		return err
	}
	const chunk = 1024
	nums := make([]int32, 0, chunk)
	cits := make([]Citation, chunk)
	for lo := 0; lo < len(rows); lo += chunk {
		if err := ctx.Err(); err != nil {
			return err
		}
		nums = nums[:0]
		for i := lo; i < min(lo+chunk, len(rows)); i++ {
			nums = append(nums, int32(i))
		}
		clear(cits)
		texts.Citations(nums, cits)
		for j, i := range nums {
			v := &rows[i]
			r := v.row
			if r.State == RowKeyed {
				r.Key = texts.Text(FieldKey, v.key)
			}
			for _, h := range v.redirects {
				r.Redirects = append(r.Redirects, texts.Text(FieldFinalURL, h))
			}
			for _, e := range v.evidence {
				r.Evidence = append(r.Evidence, ViewEvidence{Retrieval: texts.Text(FieldRetrieval, e.Retrieval),
					Content: texts.Text(FieldContent, e.Content), Digest: texts.Text(FieldEvidence, e.Digest), SimHash: e.SimHash, HasSim: e.HasSim})
			}
			r.Links = Links(&cits[j])
			r.Member = Listed(&cits[j])
			if r.Member.Norm != nil {
				r.Member.Norm.Policy = nil
			}
			sortStrings(&r.Redirects)
			slicesSortEvidence(r.Evidence)
			if err := fn(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// Links returns ViewRow.Links of a citation: the final URL of each
// redirected retrieval, each canonical declaration's URL and each
// relation target, sorted and without repeats.
func Links(c *Citation) []string {
	var out []string
	for _, r := range c.Retrievals {
		if r.FinalURL != "" && len(r.Hops) > 0 {
			out = append(out, r.FinalURL)
		}
		for _, cn := range r.Canonicals {
			out = append(out, cn.URL)
		}
	}
	for _, rel := range c.Relations {
		out = append(out, rel.Target)
	}
	sortStrings(&out)
	return out
}

func sortStrings(s *[]string) {
	slices.Sort(*s)
	*s = slices.Compact(*s)
}

func slicesSortEvidence(e []ViewEvidence) { slices.SortFunc(e, CompareViewEvidence) }
