package model

// Verdicts of a review group. A verdict says how strong the reason to
// review the members together is; it is never a claim that they are the
// same resource.
const (
	VerdictIdentityConfirmed = "identity-confirmed"
	VerdictNormalizedCompare = "normalized-compare"
	VerdictNeedsContentCheck = "needs-content-check"
	VerdictConflict          = "conflict"
)

// Verdict is one entry of the verdict codebook: the name the groups command
// prints, a label, and the one definition that the export's codebook, the
// groups command's help and the queries all rest on. Short is the same
// definition cut to a help line.
type Verdict struct {
	Name       string
	Label      string
	Definition string
	Short      []string // the help's lines
}

// Verdicts is the codebook, from the strongest reason to the weakest, then
// conflict: the order the groups command's help and the export list it.
var Verdicts = []Verdict{
	{VerdictIdentityConfirmed, "identity confirmed",
		"Every member has a successful retrieval (a 2xx response that is not an error, soft-404 or login page), at least two distinct retrievals are among them, and their content evidence agrees: equal content hashes, equal text digests of the main text, or main texts whose SimHashes are within the near-duplicate threshold. A single member is never identity-confirmed.",
		[]string{"every member's successful retrieval agrees (content hash,", "text digest or near-identical text); two retrievals at least"}},
	{VerdictNormalizedCompare, "normalized compare",
		"The members' comparison keys are equal by syntax-level rules (RFC 3986 section 6, WHATWG URL) and tracking-parameter removal only; no content evidence confirms or contradicts it.",
		[]string{"keys equal by syntax rules and tracking removal only"}},
	{VerdictNeedsContentCheck, "needs content check",
		"Equality relied on a server-defined host rule or on a same-host redirect, and no content evidence confirms it: compare the content before counting the members as one source.",
		[]string{"equality relied on a server-defined host rule or a", "redirect, and no content evidence confirms it"}},
	{VerdictConflict, "conflict",
		"The main texts of the members' successful retrievals differ beyond the near-duplicate threshold: the same key served different content. Differing bytes with equal or near-identical text are no conflict.",
		[]string{"main texts of successful retrievals differ beyond", "the near-duplicate threshold"}},
}

// DefaultMaxShared is how many distinct groups may share a redirect target
// or a content hash before it stops counting as duplicate evidence: a login
// wall, a home page or a soft-404 page is the same target for many
// unrelated sources. groups, stats, lineage, renormalize and export all
// default to it, and the export's codebook quotes it.
const DefaultMaxShared = 3
