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

// The subjects a decision can be about.
const (
	// SubjectGroup is a review group: the decision is about its members,
	// and the group's review state follows it.
	SubjectGroup = "group"
	// SubjectPair is two citations, whichever groups they are in: whether
	// these two cite one resource. It never changes a group's state.
	SubjectPair = "pair"
	// SubjectRelation is the relation between two review groups: whether
	// GroupID relates to RelatedTo, and how. It never changes either
	// group's state.
	SubjectRelation = "relation"
)

// Subjects lists the subjects, for help and validation.
var Subjects = []string{SubjectGroup, SubjectPair, SubjectRelation}

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
	ID string `json:"id"` // r- and 12 hex digits
	// Subject is what the decision is about: SubjectGroup (GroupID's
	// members), SubjectPair (the two Citations) or SubjectRelation (the
	// relation from GroupID to RelatedTo).
	Subject   string `json:"subject"`
	Decision  string `json:"decision"`
	Relation  string `json:"relation,omitempty"`
	RelatedTo string `json:"related_to,omitempty"` // a group id: with related about a group; the other group about a relation
	// RelatedKey is the key of the group RelatedTo, about a relation.
	RelatedKey string   `json:"related_key,omitempty"`
	Rationale  string   `json:"rationale"`
	Reviewer   string   `json:"reviewer"`
	At         string   `json:"at"` // xsd:dateTime, UTC, nanoseconds
	GroupID    string   `json:"group_id,omitempty"`
	GroupKey   string   `json:"group_key,omitempty"`
	Citations  []string `json:"citations"` // citation ids, sorted
	Guideline  string   `json:"guideline"`
	Digest     string   `json:"evidence_digest"`
	Revises    string   `json:"revises,omitempty"` // the review id of the decision this one revises
	Node       string   `json:"-"`                 // the pg:Adjudication node
	Evidence   Evidence `json:"-"`                 // what the reviewer was shown
}

// Request asks Record to store a decision about the group whose evidence
// is Evidence (made with EvidenceOf).
type Request struct {
	// Subject is SubjectGroup ("" too), SubjectPair or SubjectRelation.
	// About a pair, Evidence holds the two citations (PairEvidence);
	// about a relation, the two groups (RelationEvidence), GroupID and
	// GroupKey the first, RelatedTo and RelatedKey the other.
	Subject    string
	Decision   string
	Relation   string // with Related: one of RelationKinds
	RelatedTo  string // with Related about a group: another group's id, optional; about a relation: the other group
	RelatedKey string // about a relation: the other group's key
	Rationale  string
	Reviewer   string
	GroupID    string
	GroupKey   string
	Evidence   Evidence
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
	subject := r.subject()
	if !slices.Contains(Subjects, subject) {
		return bad("subject %q: want one of %s", r.Subject, strings.Join(Subjects, ", "))
	}
	if !slices.Contains(Decisions, r.Decision) {
		return bad("decision %q: want one of %s", r.Decision, strings.Join(Decisions, ", "))
	}
	if r.Decision == Related {
		if !slices.Contains(RelationKinds, r.Relation) {
			return bad("relation %q: a related decision names one of %s", r.Relation, strings.Join(RelationKinds, ", "))
		}
	} else if r.Relation != "" {
		return bad("relation %q: only a related decision names a relation", r.Relation)
	}
	switch subject {
	case SubjectGroup:
		if r.RelatedTo != "" && r.Decision != Related {
			return bad("related_to %q: only a related decision names a related group", r.RelatedTo)
		}
	case SubjectPair:
		if r.RelatedTo != "" {
			return bad("related_to %q: a decision about a pair of citations names no group", r.RelatedTo)
		}
		if len(r.Evidence.Members) != 2 || r.Evidence.Members[0].CitationID == r.Evidence.Members[1].CitationID {
			return bad("a pair is two different citations")
		}
	case SubjectRelation:
		if r.GroupID == "" || r.RelatedTo == "" || r.GroupID == r.RelatedTo {
			return bad("a relation is between two different groups (%q and %q)", r.GroupID, r.RelatedTo)
		}
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

// subject returns the request's subject, SubjectGroup when none is named.
func (r *Request) subject() string { return cmp.Or(r.Subject, SubjectGroup) }

// subjectKey names the subject of a decision: decisions with the same
// key revise each other. A group's decisions are keyed by citation
// instead (any shared member), so their key is "".
func subjectKey(subject string, citations []string, group, related string) string {
	switch subject {
	case SubjectPair:
		return SubjectPair + " " + strings.Join(citations, " ")
	case SubjectRelation:
		ends := []string{group, related}
		slices.Sort(ends)
		return SubjectRelation + " " + strings.Join(ends, " ")
	}
	return ""
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
	subject := r.subject()
	parts := []string{at, r.Reviewer, r.Decision, r.Relation, r.RelatedTo, r.Rationale, r.GroupID, digest}
	if subject != SubjectGroup {
		// A group's review keeps the IRI it was minted with before
		// there were other subjects.
		parts = append(parts, subject)
	}
	rev := model.Mint("review", parts...)
	d := &Decision{
		ID:         "r-" + rev[strings.LastIndexByte(rev, '/')+1:][:12],
		Subject:    subject,
		Decision:   r.Decision,
		Relation:   r.Relation,
		RelatedTo:  r.RelatedTo,
		RelatedKey: r.RelatedKey,
		Rationale:  r.Rationale,
		Reviewer:   r.Reviewer,
		At:         at,
		GroupID:    r.GroupID,
		GroupKey:   r.GroupKey,
		Citations:  ev.citationIDs(),
		Guideline:  GuidelineVersion,
		Digest:     digest,
		Node:       model.Mint("adjudication", rev),
		Evidence:   ev,
	}
	prev := ix.previous(d)
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
	switch subject {
	case SubjectPair:
		add(a, vocab.RDFType, iri(vocab.PairAdjudication))
	case SubjectRelation:
		add(a, vocab.RDFType, iri(vocab.GroupRelationAdjudication))
	}
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
	if d.RelatedKey != "" {
		add(a, vocab.RelatedToGroupKey, str(d.RelatedKey))
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

// Index holds every stored decision, by citation and by subject.
type Index struct {
	All        []*Decision            // newest first
	byCitation map[string][]*Decision // every subject, newest first
	groupOf    map[string][]*Decision // decisions about a group, by member citation, newest first
	bySubject  map[string][]*Decision // decisions about a pair or a relation, by subjectKey, newest first
	byGroup    map[string][]*Decision // decisions about a relation, by either end's group id, newest first
	byID       map[string]*Decision
}

// previous returns the latest decision d revises: about a group, the
// latest group decision about any of the same citations; about a pair or
// a relation, the latest about the same pair or the same two groups.
func (ix *Index) previous(d *Decision) *Decision {
	var prev *Decision
	pick := func(ds []*Decision) {
		for _, p := range ds {
			if prev == nil || p.At > prev.At {
				prev = p
			}
		}
	}
	if d.Subject == SubjectGroup {
		for _, id := range d.Citations {
			pick(ix.groupOf[id])
		}
	} else {
		pick(ix.bySubject[subjectKey(d.Subject, d.Citations, d.GroupID, d.RelatedTo)])
	}
	return prev
}

// Len is the number of decisions.
func (ix *Index) Len() int { return len(ix.All) }

// Get returns the decision with the review id, or nil.
func (ix *Index) Get(id string) *Decision { return ix.byID[id] }

// OfCitation returns the decisions that used a citation, newest first:
// about its group, about a pair it is in, and about a relation of its
// group.
func (ix *Index) OfCitation(id string) []*Decision { return ix.byCitation[id] }

// GroupDecided returns, in byte order, the citations that decisions about
// a group name: a group's review state (Status) is unreviewed unless one
// of its members is among them, so these are what counting the reviewed
// groups needs, whatever the number of groups.
func (ix *Index) GroupDecided() []string {
	out := make([]string, 0, len(ix.groupOf))
	for id := range ix.groupOf {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// Load reads every stored decision.
func Load(ctx context.Context, st Reader) (*Index, error) {
	ix := &Index{byCitation: map[string][]*Decision{}, groupOf: map[string][]*Decision{}, bySubject: map[string][]*Decision{},
		byGroup: map[string][]*Decision{}, byID: map[string]*Decision{}}
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
			RelatedKey: one(a, vocab.RelatedToGroupKey), Subject: SubjectGroup,
		}
		for _, t := range a[vocab.RDFType] {
			switch t.Value {
			case vocab.PairAdjudication:
				d.Subject = SubjectPair
			case vocab.GroupRelationAdjudication:
				d.Subject = SubjectRelation
			}
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
			if d.Subject == SubjectGroup {
				ix.groupOf[c] = append(ix.groupOf[c], d)
			}
		}
		if d.Subject != SubjectGroup {
			k := subjectKey(d.Subject, d.Citations, d.GroupID, d.RelatedTo)
			ix.bySubject[k] = append(ix.bySubject[k], d)
		}
		if d.Subject == SubjectRelation {
			ix.byGroup[d.GroupID] = append(ix.byGroup[d.GroupID], d)
			if d.RelatedTo != d.GroupID {
				ix.byGroup[d.RelatedTo] = append(ix.byGroup[d.RelatedTo], d)
			}
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
// the decisions about a group of any of its members, the latest first,
// and whether the latest is stale. Decisions about a pair or a relation
// are not the group's: PairStatus and RelationStatus give theirs.
func (ix *Index) Status(ev Evidence) *Status {
	s := &Status{State: StateUnreviewed}
	seen := map[*Decision]bool{}
	for _, m := range ev.Members {
		for _, d := range ix.groupOf[m.CitationID] {
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

// SubjectStatus is the review state of a pair of citations or of a
// relation between two groups: the decisions about that subject, newest
// first, and whether the latest is stale.
type SubjectStatus struct {
	Subject   string   `json:"subject"`              // SubjectPair or SubjectRelation
	Citations []string `json:"citations,omitempty"`  // the pair, sorted
	From      string   `json:"from_group,omitempty"` // the relation's groups, as the latest decision names them
	To        string   `json:"to_group,omitempty"`
	Status
}

// Subjects returns the latest decision about each pair that holds one of
// citations and about each relation with the group groupID at either end,
// newest first: the subjects a group's page lists besides its own
// decisions.
func (ix *Index) Subjects(citations []string, groupID string) []*Decision {
	seen := map[string]bool{}
	var out []*Decision
	take := func(d *Decision) {
		k := subjectKey(d.Subject, d.Citations, d.GroupID, d.RelatedTo)
		if !seen[k] {
			seen[k] = true
			out = append(out, ix.bySubject[k][0])
		}
	}
	for _, c := range citations {
		for _, d := range ix.byCitation[c] {
			if d.Subject == SubjectPair {
				take(d)
			}
		}
	}
	for _, d := range ix.byGroup[groupID] {
		take(d)
	}
	slices.SortFunc(out, func(a, b *Decision) int { return cmp.Or(strings.Compare(b.At, a.At), strings.Compare(a.ID, b.ID)) })
	return out
}

// SubjectStatus returns the review state of the subject of latest (a
// decision about a pair or a relation) whose evidence today is ev:
// stale when ev differs from what the latest decision was shown (a
// pair: either citation's key, retrievals or relations; a relation:
// either group's members, key, verdict or relations), and when a part of
// the subject is gone (missing says which).
func (ix *Index) SubjectStatus(latest *Decision, ev Evidence, missing []string) *SubjectStatus {
	k := subjectKey(latest.Subject, latest.Citations, latest.GroupID, latest.RelatedTo)
	h := ix.bySubject[k]
	if len(h) == 0 {
		h = []*Decision{latest}
	}
	s := &SubjectStatus{Subject: latest.Subject, Status: Status{State: StateDecided, Latest: h[0], History: h}}
	if latest.Subject == SubjectPair {
		s.Citations = h[0].Citations
	} else {
		s.From, s.To = h[0].GroupID, h[0].RelatedTo
	}
	// What is gone is said once, by missing: the evidence lacks it too,
	// and comparing would only repeat it.
	s.Changes = missing
	if len(missing) == 0 {
		s.Changes = Changes(h[0].Evidence, ev)
	}
	if len(s.Changes) > 0 {
		s.State = StateStale
	}
	return s
}
