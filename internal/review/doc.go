// Package review records and reads reviewers' decisions about review
// groups (adjudications) as W3C PROV, and says whether a decision is stale.
//
// # Basics
//
// Record stores one decision in one batch of quads (one transaction): a
// pg:ReviewActivity (prov:Activity) associated with its pg:Reviewer
// (prov:Person) through a prov:qualifiedAssociation with prov:hadRole a
// pg:ReviewerRole and prov:hadPlan the pg:ReviewGuideline of
// GuidelineVersion, that prov:used the member citations and a
// pg:EvidenceDigest of what the reviewer was shown, and generated the
// pg:Adjudication, which is prov:wasRevisionOf the latest earlier decision
// about the same subject. ontology/MODEL.md draws it.
//
// A decision has a subject (Request.Subject): a review group (its
// members), a pair of citations (PairEvidence; pg:PairAdjudication) or the
// relation between two groups (RelationEvidence;
// pg:GroupRelationAdjudication). Each subject has its own revisions: a
// group's decision revises the latest group decision about any of the
// same citations, a pair's the latest about the same two citations, a
// relation's the latest about the same two groups in either direction.
// Only group decisions make a group's Status; Index.Subjects and
// SubjectStatus give the pairs and relations, stale when either citation
// or either group changed.
//
// Decisions attach to citations, not to group ids: Load reads them all
// into an Index, and Index.Status gives a group the group decisions about
// any of its members, newest first, with the latest one stale when the group's
// evidence today (Evidence: members, keys, retrievals, content hashes,
// relations, verdict) differs from what it was shown, and the list of
// what changed.
//
// # Caveats
//
//   - Nothing is ever deleted or changed: a new decision is a new review,
//     and the store is append-only. A decision is either wholly stored or
//     not at all (one Add).
//   - review reads and writes through Reader and Writer, which
//     *graph.Store satisfies; it never opens a database. Callers that
//     record concurrently into one store serialize Record themselves
//     (the revision link names the latest decision Record saw).
//   - Only the Evidence of the group as query computed it is compared;
//     a change of policy digest alone, with the same keys and members,
//     does not make a decision stale.
//
// review may import internal/query, internal/model, internal/vocab and
// internal/graph (for terms and quads: it writes through its own Writer
// interface, which *graph.Store satisfies); it must not import
// internal/service, internal/render or internal/server, which use it.
package review
