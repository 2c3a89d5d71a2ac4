package normalize

import "strings"

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
	// The step log and the removed parameters, returned by Steps and
	// RemovedParams. The first few are stored inline, so most results
	// need no allocation for them; the rest spill to the Ext slices.
	steps      [resultSteps]Step
	nSteps     int
	stepsExt   []Step
	removed    [resultRemoved]string
	nRemoved   int
	removedExt []string
	// Compare says whether the key may be compared as a string.
	Compare Compare
	// HostRule names the policy host rule that applied, if any.
	HostRule string
}

// Host returns the host of Parsed that a browser would contact: the
// authority without userinfo and port. It is "" when Parsed has no "://",
// and the whole rest when nothing follows the authority (the URL
// Standard gives every special URL a path, so that is a non-special one).
// Whether a redirect hop crosses hosts (pg:crossesHost) is decided by it.
func (r *Result) Host() string {
	i := strings.Index(r.Parsed, "://")
	if i < 0 {
		return ""
	}
	h := r.Parsed[i+3:]
	j := strings.IndexAny(h, "/?#")
	if j < 0 {
		return h
	}
	h = h[:j]
	if k := strings.LastIndexByte(h, '@'); k >= 0 {
		h = h[k+1:]
	}
	if k := strings.LastIndexByte(h, ':'); k >= 0 && !strings.HasSuffix(h, "]") {
		h = h[:k]
	}
	return h
}

// resultSteps and resultRemoved are how many steps and removed parameters a
// Result stores inline: almost every citation URL needs at most this many.
const (
	resultSteps   = 2
	resultRemoved = 2
)

// Steps returns every transformation in sequence order, or nil.
func (r *Result) Steps() []Step {
	if r.stepsExt != nil {
		return r.stepsExt
	}
	if r.nSteps == 0 {
		return nil
	}
	return r.steps[:r.nSteps]
}

// RemovedParams returns the query segments ("name=value") the policy
// removed, in input order, or nil.
func (r *Result) RemovedParams() []string {
	if r.removedExt != nil {
		return r.removedExt
	}
	if r.nRemoved == 0 {
		return nil
	}
	return r.removed[:r.nRemoved]
}

// setSteps stores the run's step log in the Result.
func (res *Result) setSteps(r *run) {
	res.steps, res.nSteps, res.stepsExt = r.stepArr, r.nSteps, r.stepsExt
}

// addRemoved appends removed parameters.
func (r *Result) addRemoved(p []string) {
	if r.removedExt == nil && r.nRemoved+len(p) <= resultRemoved {
		r.nRemoved += copy(r.removed[r.nRemoved:], p)
		return
	}
	if r.removedExt == nil {
		r.removedExt = append([]string(nil), r.removed[:r.nRemoved]...)
	}
	r.removedExt = append(r.removedExt, p...)
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
		u.hash, u.rawFrag = "", ""
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
	var u url
	if !r.fastParse(raw, &u) {
		var err error
		if u, err = r.parseFull(n.base); err != nil {
			res.setSteps(&r)
			return res, err
		}
	}
	res.Fragment, res.HasFragment = u.rawFrag, u.hash != ""
	// Every change the parse makes is logged, so an input that logged no
	// step is its own href (FuzzEveryParseChangeIsLogged checks this) and
	// needs no serializing.
	parseLogged := r.nSteps > 0
	var parsed url
	if parseLogged {
		parsed = u
	}
	changed := r.policySteps(&u, &res)
	keepFrag := n.policy.actions[idDropFragment] == Off
	switch {
	case !parseLogged && !changed:
		res.Parsed, res.Key = raw, raw
		if !keepFrag {
			res.Key = raw[:len(raw)-len(u.hash)]
		}
	case !parseLogged:
		res.Parsed = raw
		if r.keyUsable(&u, keepFrag) {
			res.Key = r.keyCand
		} else {
			var buf [256]byte
			res.Key = string(u.appendHref(buf[:0], keepFrag))
		}
	default:
		// One allocation holds both strings: the key is Parsed itself or a
		// prefix of it unless a policy step changed the path or query.
		var buf [512]byte
		b := parsed.appendHref(buf[:0], true)
		np := len(b)
		if !changed {
			res.Parsed = string(b)
			res.Key = res.Parsed
			if !keepFrag {
				res.Key = res.Parsed[:np-len(u.hash)]
			}
		} else if r.keyUsable(&u, keepFrag) {
			res.Parsed, res.Key = string(b), r.keyCand
		} else {
			s := string(u.appendHref(b, keepFrag))
			res.Parsed, res.Key = s[:np], s[np:]
		}
	}
	res.setSteps(&r)
	return res, nil
}

// keyUsable reports whether the key built by the tracking step is still
// the key: no later step changed the path or query, and the fragment is not
// part of the key.
func (r *run) keyUsable(u *url, keepFrag bool) bool {
	return r.keyCand != "" && !keepFrag && u.path == r.candPath && u.search == r.candSearch
}

// policySteps runs the policy's own steps on a parsed URL. It reports
// whether any of them changed the path or query.
func (r *run) policySteps(u *url, res *Result) (changed bool) {
	p := r.p
	step := func(id ruleID, before, after string) {
		r.log(id, before, after)
		changed = true
	}
	if p.actions[idPercentCase] == Apply && (u.pathPct || u.searchPct) {
		if s := percentCase(u.path); s != u.path {
			step(idPercentCase, u.path, s)
			u.path = s
		}
		if s := percentCase(u.search); s != u.search {
			step(idPercentCase, u.search, s)
			u.search = s
		}
	}
	if p.actions[idDecodeUnreserved] == Apply && (u.pathPct || u.searchPct) {
		if s := decodeUnreserved(u.path); s != u.path {
			step(idDecodeUnreserved, u.path, s)
			u.path = s
		}
		if s := decodeUnreserved(u.search); s != u.search {
			step(idDecodeUnreserved, u.search, s)
			u.search = s
		}
	}
	if u.hash != "" && p.actions[idDropFragment] == Apply {
		r.log(idDropFragment, u.hash, "")
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
		if u.search == "" || p.actions[id] != Apply {
			return
		}
		var pbuf [256]byte
		prefix := u.appendPrefix(pbuf[:0])
		out, removed := dropParams(u.search, m, prefix, r.removedArr[:])
		if removed == nil {
			return
		}
		s := out[len(prefix):]
		step(id, u.search, s)
		u.search = s
		// out is the whole key so far; it stays the key unless a later
		// step changes the path or query again.
		r.keyCand, r.candPath, r.candSearch = out, u.path, u.search
		res.addRemoved(removed)
	}
	dropStep(idTrackingParams, &p.tracking)
	if hr != nil {
		dropStep(idHostParams, &hr.params)
	}
	if u.search != "" && p.actions[idSortQuery] == Apply {
		if s := "?" + sortQuery(u.search[1:]); s != u.search {
			step(idSortQuery, u.search, s)
			u.search = s
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
