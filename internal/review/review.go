package review

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/vocab"
)

// The decisions a reviewer can record.
const (
	Same      = "same"      // the citations cite one resource
	Different = "different" // split: they must not be counted together
	Related   = "related"   // related resources, of a RelationKinds kind
	Unsure    = "unsure"    // looked at, undecided
)

// Decisions lists the decisions in the order the help and the UI show them.
var Decisions = []string{Same, Different, Related, Unsure}

// RelationKinds are the kinds a related decision names.
var RelationKinds = []string{"format_of", "mirror_of", "syndication_of", "archive_of", "other"}

// GuidelineVersion names the review guideline every review follows (its
// prov:hadPlan): the verdict codebook of internal/model and the decision
// definitions above. Change it when either changes meaning.
const GuidelineVersion = "provgraph-review-1"

// Limits on what a reviewer gives, so that one decision stays one small
// batch.
const (
	MaxRationale = 4096 // bytes of rationale
	MaxReviewer  = 200  // bytes of reviewer name
)

// ErrInvalid marks a decision request that is wrong: an unknown decision
// or relation kind, no reviewer, a rationale too long, no citations.
var ErrInvalid = errors.New("invalid decision")

// Reader reads quads by pattern; *graph.Store satisfies it.
type Reader interface {
	Match(ctx context.Context, pattern graph.Quad, fn func(graph.Quad) error) error
}

// Writer adds an append-only batch of quads in one transaction, and
// reads; *graph.Store satisfies it.
type Writer interface {
	Reader
	Add(quads []graph.Quad) (int, error)
}

// Decision is one stored adjudication.
type Decision struct {
	ID        string   `json:"id"` // r- and 12 hex digits
	Decision  string   `json:"decision"`
	Relation  string   `json:"relation,omitempty"`
	RelatedTo string   `json:"related_to,omitempty"` // a group id, with related
	Rationale string   `json:"rationale"`
	Reviewer  string   `json:"reviewer"`
	At        string   `json:"at"` // xsd:dateTime, UTC, nanoseconds
	GroupID   string   `json:"group_id,omitempty"`
	GroupKey  string   `json:"group_key,omitempty"`
	Citations []string `json:"citations"` // citation ids, sorted
	Guideline string   `json:"guideline"`
	Digest    string   `json:"evidence_digest"`
	Revises   string   `json:"revises,omitempty"` // the review id of the decision this one revises
	Node      string   `json:"-"`                 // the pg:Adjudication node
	Evidence  Evidence `json:"-"`                 // what the reviewer was shown
}

// Request asks Record to store a decision about the group whose evidence
// is Evidence (made with EvidenceOf).
type Request struct {
	Decision  string
	Relation  string // with Related: one of RelationKinds
	RelatedTo string // with Related: another group's id, optional
	Rationale string
	Reviewer  string
	GroupID   string
	GroupKey  string
	Evidence  Evidence
	// CitationNodes are the nodes of the member citations, which the
	// adjudication links to (pg:adjudicates).
	CitationNodes []string
}

// Validate checks r and returns an error wrapping ErrInvalid that names
// the field.
func (r *Request) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
	}
	if !slices.Contains(Decisions, r.Decision) {
		return bad("decision %q: want one of %s", r.Decision, strings.Join(Decisions, ", "))
	}
	if r.Decision == Related {
		if !slices.Contains(RelationKinds, r.Relation) {
			return bad("relation %q: a related decision names one of %s", r.Relation, strings.Join(RelationKinds, ", "))
		}
	} else if r.Relation != "" || r.RelatedTo != "" {
		return bad("relation %q: only a related decision names a relation", r.Relation)
	}
	if strings.TrimSpace(r.Reviewer) == "" {
		return bad("reviewer: give the reviewer's name")
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"reviewer", r.Reviewer, MaxReviewer}, {"rationale", r.Rationale, MaxRationale}, {"related_to", r.RelatedTo, MaxReviewer}} {
		if len(f.v) > f.max {
			return bad("%s: %d bytes, at most %d", f.name, len(f.v), f.max)
		}
		if !utf8.ValidString(f.v) {
			return bad("%s: not valid UTF-8", f.name)
		}
	}
	if len(r.Evidence.Members) == 0 || len(r.CitationNodes) != len(r.Evidence.Members) {
		return bad("no member citations to decide about")
	}
	return nil
}

// timeLayout writes times in UTC with nine fractional digits, so that
// their text sorts as the times do.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// Record stores the decision r in one batch and returns it as stored. It
// links it as a revision of the latest earlier decision about any of the
// same citations. The decision is committed when Record returns.
func Record(ctx context.Context, st Writer, r Request, now time.Time) (*Decision, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	ix, err := Load(ctx, st)
	if err != nil {
		return nil, err
	}
	ev := r.Evidence.normalized()
	sum, digest := ev.encode()
	at := now.UTC().Format(timeLayout)
	rev := model.Mint("review", at, r.Reviewer, r.Decision, r.Relation, r.RelatedTo, r.Rationale, r.GroupID, digest)
	d := &Decision{
		ID:        "r-" + rev[strings.LastIndexByte(rev, '/')+1:][:12],
		Decision:  r.Decision,
		Relation:  r.Relation,
		RelatedTo: r.RelatedTo,
		Rationale: r.Rationale,
		Reviewer:  r.Reviewer,
		At:        at,
		GroupID:   r.GroupID,
		GroupKey:  r.GroupKey,
		Citations: ev.citationIDs(),
		Guideline: GuidelineVersion,
		Digest:    digest,
		Node:      model.Mint("adjudication", rev),
		Evidence:  ev,
	}
	var prev *Decision
	for _, id := range d.Citations {
		for _, p := range ix.byCitation[id] {
			if prev == nil || p.At > prev.At {
				prev = p
			}
		}
	}
	if prev != nil {
		d.Revises = prev.ID
	}
	iri := graph.IRI
	str := graph.String
	when := graph.Literal(at, graph.XSDDateTime)
	assoc := model.Mint("association", rev)
	person := model.Mint("reviewer", r.Reviewer)
	role := model.Mint("role", "reviewer")
	plan := model.Mint("guideline", GuidelineVersion)
	evid := model.Mint("evidence", digest)
	var qs []graph.Quad
	add := func(s string, p string, o graph.Term) { qs = append(qs, graph.Quad{S: iri(s), P: iri(p), O: o}) }
	add(rev, vocab.RDFType, iri(vocab.ReviewActivity))
	add(rev, vocab.RDFType, iri(vocab.ProvActivity))
	add(rev, vocab.ProvStartedAtTime, when)
	add(rev, vocab.ProvEndedAtTime, when)
	add(rev, vocab.ProvWasAssociatedWith, iri(person))
	add(rev, vocab.ProvQualifiedAssociation, iri(assoc))
	add(assoc, vocab.RDFType, iri(vocab.ProvAssociation))
	add(assoc, vocab.ProvAgentProp, iri(person))
	add(assoc, vocab.ProvHadRole, iri(role))
	add(assoc, vocab.ProvHadPlan, iri(plan))
	add(person, vocab.RDFType, iri(vocab.Reviewer))
	add(person, vocab.RDFType, iri(vocab.ProvPerson))
	add(person, vocab.RDFType, iri(vocab.ProvAgent))
	add(person, vocab.ReviewerName, str(r.Reviewer))
	add(role, vocab.RDFType, iri(vocab.ReviewerRole))
	add(role, vocab.RDFType, iri(vocab.ProvRole))
	add(plan, vocab.RDFType, iri(vocab.ReviewGuideline))
	add(plan, vocab.RDFType, iri(vocab.ProvPlan))
	add(plan, vocab.RDFType, iri(vocab.ProvEntity))
	add(plan, vocab.GuidelineVersion, str(GuidelineVersion))
	add(evid, vocab.RDFType, iri(vocab.EvidenceDigest))
	add(evid, vocab.RDFType, iri(vocab.ProvEntity))
	add(evid, vocab.Digest, str(digest))
	add(evid, vocab.EvidenceSummary, str(sum))
	add(rev, vocab.ProvUsed, iri(evid))
	a := d.Node
	add(a, vocab.RDFType, iri(vocab.Adjudication))
	add(a, vocab.RDFType, iri(vocab.ProvEntity))
	add(a, vocab.ProvWasGeneratedBy, iri(rev))
	add(a, vocab.ProvWasAttributedTo, iri(person))
	add(a, vocab.ProvGeneratedAtTime, when)
	add(a, vocab.ReviewId, str(d.ID))
	add(a, vocab.Decision, str(d.Decision))
	if d.Relation != "" {
		add(a, vocab.RelationKind, str(d.Relation))
	}
	if d.RelatedTo != "" {
		add(a, vocab.RelatedToGroup, str(d.RelatedTo))
	}
	add(a, vocab.Rationale, str(d.Rationale))
	if d.GroupID != "" {
		add(a, vocab.AdjudicatedGroupId, str(d.GroupID))
	}
	if d.GroupKey != "" {
		add(a, vocab.AdjudicatedGroupKey, str(d.GroupKey))
	}
	if prev != nil {
		add(a, vocab.ProvWasRevisionOf, iri(prev.Node))
	}
	for _, n := range r.CitationNodes {
		add(rev, vocab.ProvUsed, iri(n))
		add(a, vocab.Adjudicates, iri(n))
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if _, err := st.Add(qs); err != nil {
		return nil, fmt.Errorf("record decision: %w", err)
	}
	return d, nil
}

// Index holds every stored decision, by citation.
type Index struct {
	All        []*Decision            // newest first
	byCitation map[string][]*Decision // newest first
	byID       map[string]*Decision
}

// Len is the number of decisions.
func (ix *Index) Len() int { return len(ix.All) }

// Get returns the decision with the review id, or nil.
func (ix *Index) Get(id string) *Decision { return ix.byID[id] }

// OfCitation returns the decisions about a citation, newest first.
func (ix *Index) OfCitation(id string) []*Decision { return ix.byCitation[id] }

// Load reads every stored decision.
func Load(ctx context.Context, st Reader) (*Index, error) {
	ix := &Index{byCitation: map[string][]*Decision{}, byID: map[string]*Decision{}}
	var nodes []string
	err := st.Match(ctx, graph.Quad{P: graph.IRI(vocab.RDFType), O: graph.IRI(vocab.Adjudication)}, func(q graph.Quad) error {
		nodes = append(nodes, q.S.Value)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load decisions: %w", err)
	}
	props := func(n string) (map[string][]graph.Term, error) {
		m := map[string][]graph.Term{}
		err := st.Match(ctx, graph.Quad{S: graph.IRI(n)}, func(q graph.Quad) error {
			m[q.P.Value] = append(m[q.P.Value], q.O)
			return nil
		})
		return m, err
	}
	one := func(m map[string][]graph.Term, p string) string {
		if len(m[p]) == 0 {
			return ""
		}
		return m[p][0].Value
	}
	revisionOf := map[*Decision]string{}
	byNode := map[string]*Decision{}
	for _, n := range nodes {
		a, err := props(n)
		if err != nil {
			return nil, fmt.Errorf("load decisions: %w", err)
		}
		d := &Decision{
			Node: n, ID: one(a, vocab.ReviewId), Decision: one(a, vocab.Decision), Relation: one(a, vocab.RelationKind),
			RelatedTo: one(a, vocab.RelatedToGroup), Rationale: one(a, vocab.Rationale), At: one(a, vocab.ProvGeneratedAtTime),
			GroupID: one(a, vocab.AdjudicatedGroupId), GroupKey: one(a, vocab.AdjudicatedGroupKey),
		}
		rev := one(a, vocab.ProvWasGeneratedBy)
		r, err := props(rev)
		if err != nil {
			return nil, fmt.Errorf("load decisions: %w", err)
		}
		if p, err := props(one(r, vocab.ProvWasAssociatedWith)); err == nil {
			d.Reviewer = one(p, vocab.ReviewerName)
		}
		if as, err := props(one(r, vocab.ProvQualifiedAssociation)); err == nil {
			if g, err := props(one(as, vocab.ProvHadPlan)); err == nil {
				d.Guideline = one(g, vocab.GuidelineVersion)
			}
		}
		for _, u := range r[vocab.ProvUsed] {
			if !strings.HasPrefix(u.Value, model.IDBase+"evidence/") {
				continue
			}
			e, err := props(u.Value)
			if err != nil {
				return nil, fmt.Errorf("load decisions: %w", err)
			}
			d.Digest = one(e, vocab.Digest)
			if err := d.Evidence.decode(one(e, vocab.EvidenceSummary)); err != nil {
				return nil, fmt.Errorf("load decision %s: evidence summary: %w", d.ID, err)
			}
		}
		d.Citations = d.Evidence.citationIDs()
		revisionOf[d] = one(a, vocab.ProvWasRevisionOf)
		byNode[n] = d
		ix.All = append(ix.All, d)
	}
	for d, p := range revisionOf {
		if pd := byNode[p]; pd != nil {
			d.Revises = pd.ID
		}
	}
	slices.SortFunc(ix.All, func(a, b *Decision) int { return cmp.Or(strings.Compare(b.At, a.At), strings.Compare(a.ID, b.ID)) })
	for _, d := range ix.All {
		ix.byID[d.ID] = d
		for _, c := range d.Citations {
			ix.byCitation[c] = append(ix.byCitation[c], d)
		}
	}
	return ix, nil
}

// States of a group's review.
const (
	StateUnreviewed = "unreviewed" // no decision about any member
	StateDecided    = "decided"    // the latest decision saw today's evidence
	StateStale      = "stale"      // the evidence changed since the latest decision
)

// States lists the review states, for help and validation.
var States = []string{StateUnreviewed, StateDecided, StateStale}

// Status is the review state of one group.
type Status struct {
	State   string      `json:"state"`
	Latest  *Decision   `json:"latest,omitempty"`
	Changes []string    `json:"changes,omitempty"` // what changed since the latest decision, when stale
	History []*Decision `json:"history,omitempty"` // every decision about a member, newest first
}

// Status returns the review state of a group whose evidence today is ev:
// the decisions about any of its members, the latest first, and whether
// the latest is stale.
func (ix *Index) Status(ev Evidence) *Status {
	s := &Status{State: StateUnreviewed}
	seen := map[*Decision]bool{}
	for _, m := range ev.Members {
		for _, d := range ix.byCitation[m.CitationID] {
			if !seen[d] {
				seen[d] = true
				s.History = append(s.History, d)
			}
		}
	}
	if len(s.History) == 0 {
		return s
	}
	slices.SortFunc(s.History, func(a, b *Decision) int { return cmp.Or(strings.Compare(b.At, a.At), strings.Compare(a.ID, b.ID)) })
	s.Latest = s.History[0]
	s.Changes = Changes(s.Latest.Evidence, ev)
	s.State = StateDecided
	if len(s.Changes) > 0 {
		s.State = StateStale
	}
	return s
}

// digestOf returns "sha256:" and the hex SHA-256 of b.
func digestOf(b []byte) string {
	h := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(h[:])
}

// Counts separates adjudicated from unreviewed duplicates: groups
// (and their citations) by latest decision, stale and unreviewed. A
// different decision is a split: its members are not counted as one.
type Counts struct {
	Groups            int            `json:"groups"`
	Unreviewed        int            `json:"unreviewed_groups"`
	Decided           int            `json:"decided_groups"`
	Stale             int            `json:"stale_groups"`
	ByDecision        map[string]int `json:"groups_by_decision"`
	Splits            int            `json:"splits"`                        // groups whose latest decision is different
	ConfirmedMembers  int            `json:"confirmed_duplicate_citations"` // members of groups decided same, not stale
	UnreviewedMembers int            `json:"unreviewed_duplicate_citations"`
	Decisions         int            `json:"decisions"` // every stored decision, revisions included
}
