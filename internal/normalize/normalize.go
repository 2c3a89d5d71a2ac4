package normalize

// Step is one logged transformation: the rule that applied and the
// component (or whole input) before and after it. A tolerated validation
// error that changes nothing is logged with Before equal to After.
type Step struct {
	Rule   Rule   `json:"rule"`
	Before string `json:"before"`
	After  string `json:"after"`
}

// Compare says how far a key can be trusted as an identity, after seed
// document 002's dispatch: a key built only from syntax-level rules and
// tracking-parameter removal supports a normalized comparison; a key that a
// server-defined host rule could affect needs a signature or content hash.
type Compare string

const (
	// CompareNormalized: equal keys are a reason to group for review.
	CompareNormalized Compare = "normalized-compare"
	// CompareContent: equal keys relied on a server-defined equivalence
	// and must be confirmed by content hash or signature.
	CompareContent Compare = "signature-or-content-hash"
)

// Result is the outcome of normalizing one input. Raw is never modified:
// the key is a separate value.
type Result struct {
	// Raw is the input exactly as given.
	Raw string
	// Key is the comparison key.
	Key string
	// Parsed is the URL Standard's href for the input (fragment included)
	// under this policy's parse rules, before the policy's own steps.
	Parsed string
	// Fragment is the fragment exactly as the input spelled it, without "#";
	// HasFragment distinguishes an empty fragment from none.
	Fragment    string
	HasFragment bool
	// Steps lists every transformation in sequence order.
	Steps []Step
	// RemovedParams lists the query segments ("name=value") the policy
	// removed, in input order.
	RemovedParams []string
	// Compare says whether the key may be compared as a string.
	Compare Compare
	// HostRule names the policy host rule that applied, if any.
	HostRule string
}

// Options configures a Normalizer. The zero value means no base URL.
type Options struct {
	// Base is the URL relative references are resolved against. It is
	// parsed under the same policy; empty means relative references are
	// rejected with CodeMissingScheme.
	Base string
}

// Normalizer applies one policy. It is safe for concurrent use.
type Normalizer struct {
	policy *Policy
	base   *url
}

// New returns a Normalizer for policy p (the default policy when p is
// nil). A base URL that the policy rejects is reported as an *Error with
// CodeInvalidBase.
func New(p *Policy, opts *Options) (*Normalizer, error) {
	if p == nil {
		p = Default()
	}
	n := &Normalizer{policy: p}
	if opts != nil && opts.Base != "" {
		r := run{p: p, in: opts.Base}
		u, err := r.parse(nil)
		if err != nil {
			e := err.(*Error)
			return nil, &Error{Code: CodeInvalidBase, Rule: e.Rule, Input: opts.Base, Offset: e.Offset, Msg: "the base URL is rejected: " + string(e.Code) + ": " + e.Msg}
		}
		u.fragment, u.rawFrag = "", ""
		n.base = &u
	}
	return n, nil
}

// Policy returns the normalizer's policy.
func (n *Normalizer) Policy() *Policy { return n.policy }

// Normalize runs the whole sequence on raw. On rejection it returns a
// Result holding Raw and the steps logged before the rejection, and an
// *Error saying what is wrong and where.
func (n *Normalizer) Normalize(raw string) (Result, error) {
	r := run{p: n.policy, in: raw}
	res := Result{Raw: raw, Compare: CompareNormalized}
	u, err := r.parse(n.base)
	if err != nil {
		res.Steps = r.steps
		return res, err
	}
	var buf [256]byte
	if len(r.steps) == 0 {
		// Every change the parse makes is logged, so an input without steps
		// is its own href (FuzzNormalize checks this).
		res.Parsed = raw
	} else {
		res.Parsed = string(u.appendHref(buf[:0], true))
	}
	res.Fragment, res.HasFragment = u.rawFrag, u.fragment != ""
	changed := r.policySteps(&u, &res)
	keepFrag := n.policy.actions[idDropFragment] == Off
	if !changed && (keepFrag || u.fragment == "") {
		res.Key = res.Parsed
	} else {
		res.Key = string(u.appendHref(buf[:0], keepFrag))
	}
	res.Steps = r.steps
	return res, nil
}

// policySteps runs the policy's own steps on a parsed URL. It reports
// whether any of them changed the path or query. Query values keep their
// "?", so a logged query is a substring of what is already held.
func (r *run) policySteps(u *url, res *Result) (changed bool) {
	p := r.p
	step := func(id ruleID, before, after string) {
		r.log(ruleTable[id].name, before, after)
		changed = true
	}
	if p.actions[idPercentCase] == Apply {
		if u.pathPct {
			if s := percentCase(u.path); s != u.path {
				step(idPercentCase, u.path, s)
				u.path = s
			}
		}
		if u.queryPct {
			if s := percentCase(u.query); s != u.query {
				step(idPercentCase, u.query, s)
				u.query = s
			}
		}
	}
	if p.actions[idDecodeUnreserved] == Apply {
		if u.pathPct {
			if s := decodeUnreserved(u.path); s != u.path {
				step(idDecodeUnreserved, u.path, s)
				u.path = s
			}
		}
		if u.queryPct {
			if s := decodeUnreserved(u.query); s != u.query {
				step(idDecodeUnreserved, u.query, s)
				u.query = s
			}
		}
	}
	if u.fragment != "" && p.actions[idDropFragment] == Apply {
		r.log(RuleDropFragment, u.fragment, "")
	}
	var hr *hostRule
	for i := range p.hosts {
		if p.hosts[i].matches(u.host) {
			hr = &p.hosts[i]
			res.HostRule = hr.Name
			break
		}
	}
	dropStep := func(id ruleID, m *paramMatcher) {
		if u.query == "" || p.actions[id] != Apply {
			return
		}
		q, removed := dropParams(u.query, m)
		if removed == nil {
			return
		}
		step(id, u.query, q)
		u.query = q
		res.RemovedParams = append(res.RemovedParams, removed...)
	}
	dropStep(idTrackingParams, &p.tracking)
	if hr != nil {
		dropStep(idHostParams, &hr.params)
	}
	if u.query != "" && p.actions[idSortQuery] == Apply {
		if s := sortQuery(u.query); s != u.query {
			step(idSortQuery, u.query, s)
			u.query = s
		}
	}
	if hr != nil && hr.PathCase == "insensitive" && p.actions[idHostPathCase] == Apply {
		res.Compare = CompareContent
		if s := lowerPath(u.path); s != u.path {
			step(idHostPathCase, u.path, s)
			u.path = s
		}
	}
	if hr != nil && hr.TrailingSlash == "insensitive" && p.actions[idHostTrailingSlash] == Apply {
		res.Compare = CompareContent
		// Only a single trailing slash after a non-empty segment: "/a//"
		// keeps its repeated slashes, so the step is idempotent.
		if n := len(u.path); n > 2 && u.path[n-1] == '/' && u.path[n-2] != '/' {
			s := u.path[:len(u.path)-1]
			step(idHostTrailingSlash, u.path, s)
			u.path = s
		}
	}
	return changed
}
