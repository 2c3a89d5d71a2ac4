package resolve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/provgraph/provgraph/internal/model"
)

// Policy defaults. The redirect limit, body limit, timeout, schemes and
// ports are part of a dataset's published policy: a resolve run records
// the values it used.
const (
	DefaultMaxRedirects = 10
	DefaultMaxBodyBytes = 16 << 20
	DefaultTimeout      = 15 * time.Second
	DefaultPerHost      = 2
)

// DefaultSchemes and DefaultPorts are what a Fetcher fetches when the
// policy does not say.
var (
	DefaultSchemes = []string{"http", "https"}
	DefaultPorts   = []int{80, 443}
)

// Options configures New. A nil *Options means the defaults. The zero
// value of each Policy field means its default.
type Options struct {
	Policy  model.FetchPolicy
	PerHost int // requests to one host name at once; 0 means DefaultPerHost
	// LookupHost, when set, replaces DNS: it returns the addresses of a
	// host name. Tests map names to loopback servers with it. The guard
	// checks the address dialled either way.
	LookupHost func(ctx context.Context, host string) ([]netip.Addr, error)
	// TLSConfig, when set, is used for HTTPS (tests trust their server's
	// certificate with it).
	TLSConfig *tls.Config
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// NoRedirects follows no redirect: the first response is recorded, and
	// a redirect is a hop with the outcome too-many-redirects (or
	// redirect-loop, when it points back at the URL requested). It is how a
	// redirect limit of 0 is asked for, since a zero Policy.MaxRedirects
	// means DefaultMaxRedirects; Policy.MaxRedirects must then be 0, and
	// the Fetcher's Policy reports 0.
	NoRedirects bool
	// Capture, when set, is given every exchange of every retrieval: each
	// redirect hop's request and response (with up to 4 KiB of its body)
	// and the final one (with its body up to Policy.MaxBodyBytes, marked
	// truncated past it). The final response's reference becomes the
	// retrieval's SnapshotRef. A capture that fails makes the retrieval's
	// outcome capture-error; nothing else of it is lost.
	Capture Capturer
}

// Fetcher retrieves URLs under one policy. It is safe for concurrent use.
type Fetcher struct {
	policy    model.FetchPolicy
	transport *http.Transport
	dialer    *net.Dialer
	lookup    func(ctx context.Context, host string) ([]netip.Addr, error)
	hosts     *hostLimiter
	guard     *guard
	now       func() time.Time
	capturer  Capturer
}

// New returns a Fetcher.
func New(opts *Options) (*Fetcher, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := opts.Policy
	switch {
	case opts.NoRedirects && p.MaxRedirects != 0:
		return nil, fmt.Errorf("resolve: redirect limit %d given with NoRedirects", p.MaxRedirects)
	case p.MaxRedirects == 0 && !opts.NoRedirects:
		p.MaxRedirects = DefaultMaxRedirects
	}
	if p.MaxBodyBytes == 0 {
		p.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if p.Timeout == 0 {
		p.Timeout = DefaultTimeout
	}
	if len(p.Schemes) == 0 {
		p.Schemes = DefaultSchemes
	}
	if len(p.Ports) == 0 {
		p.Ports = DefaultPorts
	}
	switch {
	case p.MaxRedirects < 0:
		return nil, fmt.Errorf("resolve: redirect limit %d is negative (Options.NoRedirects follows none)", p.MaxRedirects)
	case p.MaxBodyBytes < 0:
		return nil, fmt.Errorf("resolve: body size limit %d is negative", p.MaxBodyBytes)
	case p.Timeout < 0:
		return nil, fmt.Errorf("resolve: timeout %v is negative", p.Timeout)
	case p.UserAgent == "":
		return nil, errors.New("resolve: no user agent: requests must say who makes them")
	}
	for _, s := range p.Schemes {
		if s != "http" && s != "https" {
			return nil, fmt.Errorf("resolve: scheme %q: only http and https can be fetched", s)
		}
	}
	for _, n := range p.Ports {
		if n < 1 || n > 65535 {
			return nil, fmt.Errorf("resolve: port %d is out of range 1..65535", n)
		}
	}
	perHost := opts.PerHost
	if perHost <= 0 {
		perHost = DefaultPerHost
	}
	f := &Fetcher{
		policy:   p,
		lookup:   opts.LookupHost,
		hosts:    &hostLimiter{limit: perHost, slots: map[string]chan struct{}{}},
		now:      opts.Now,
		capturer: opts.Capture,
	}
	if f.now == nil {
		f.now = time.Now
	}
	g := &guard{allowPrivate: p.AllowPrivate, ports: p.Ports}
	f.guard = g
	f.dialer = &net.Dialer{Control: g.control, KeepAlive: 30 * time.Second}
	f.transport = &http.Transport{
		Proxy:                  nil, // a proxy would be the address dialled, defeating the guard
		DialContext:            f.dial,
		TLSClientConfig:        opts.TLSConfig,
		ForceAttemptHTTP2:      true,
		DisableCompression:     true, // hash the body as sent
		MaxIdleConnsPerHost:    perHost,
		IdleConnTimeout:        30 * time.Second,
		MaxResponseHeaderBytes: 1 << 20,
	}
	return f, nil
}

// Policy returns the policy the Fetcher applies, defaults filled in.
func (f *Fetcher) Policy() model.FetchPolicy { return f.policy }

// Close closes idle connections.
func (f *Fetcher) Close() { f.transport.CloseIdleConnections() }

// dial connects to addr. With LookupHost set, a host name is resolved
// through it and its addresses are tried in order; the dialer's Control
// checks each address.
func (f *Fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if f.lookup == nil {
		return f.dialer.DialContext(ctx, network, addr)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return f.dialer.DialContext(ctx, network, addr)
	}
	ips, err := f.lookup(ctx, host)
	if err != nil {
		return nil, &net.DNSError{Err: err.Error(), Name: host, IsNotFound: true}
	}
	if len(ips) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var firstErr error
	for _, ip := range ips {
		c, err := f.dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// stamp is the time of an event, as stored: RFC 3339 in UTC with
// nanoseconds.
func (f *Fetcher) stamp() string { return f.now().UTC().Format(time.RFC3339Nano) }

// isRedirect reports whether a status is a redirect that is followed
// (RFC 9110 §15.4; 300 and 304 are not followed).
func isRedirect(status int) bool {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// Fetch retrieves target, following redirects by hand, and returns what it
// observed. Failures are observations too: they come back as a Retrieval
// whose Outcome says what happened. The error is non-nil only when ctx was
// cancelled; the Retrieval is then nil.
func (f *Fetcher) Fetch(ctx context.Context, target string) (*model.Retrieval, error) {
	rt, _, err := f.fetch(ctx, target, false)
	return rt, err
}

// FetchBody is Fetch that also returns the final response's body as read
// (up to Policy.MaxBodyBytes, marked truncated past it), for extraction;
// the body is nil when there was no final response.
func (f *Fetcher) FetchBody(ctx context.Context, target string) (*model.Retrieval, *model.Body, error) {
	return f.fetch(ctx, target, true)
}

func (f *Fetcher) fetch(ctx context.Context, target string, keep bool) (*model.Retrieval, *model.Body, error) {
	st := &fetchState{keep: keep || f.capturer != nil}
	rt, err := f.fetchChain(ctx, target, st)
	if err != nil {
		return nil, nil, err
	}
	if st.captureErr != nil {
		was := rt.Outcome
		if rt.OutcomeError != "" {
			was += ": " + rt.OutcomeError
		}
		rt.Outcome = model.OutcomeCaptureError
		rt.OutcomeError = fmt.Sprintf("the response was received (%s) but its capture was not written: %v", was, st.captureErr)
		rt.SnapshotRef = ""
	}
	if !keep {
		return rt, nil, nil
	}
	return rt, st.body, nil
}

func (f *Fetcher) fetchChain(ctx context.Context, target string, st *fetchState) (*model.Retrieval, error) {
	rt := &model.Retrieval{RetrievedAt: f.stamp()}
	fail := func(outcome, format string, args ...any) (*model.Retrieval, error) {
		rt.Outcome, rt.OutcomeError = outcome, fmt.Sprintf(format, args...)
		return rt, nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return fail(model.OutcomeInvalidURL, "%v", err)
	}
	u.Fragment, u.RawFragment = "", ""
	visited := map[string]bool{}
	for {
		if out, msg := f.check(u); out != "" {
			return fail(out, "%s", msg)
		}
		visited[u.String()] = true
		res, err := f.request(ctx, u, rt, st)
		if err != nil {
			return nil, err
		}
		if !res.redirect {
			return rt, nil
		}
		hop := model.Hop{From: u.String(), Status: model.Integer(strconv.Itoa(res.status)), At: res.at, Location: res.location}
		next, perr := u.Parse(res.location)
		if perr != nil {
			hop.To = res.location
			rt.Hops = append(rt.Hops, hop)
			return fail(model.OutcomeInvalidRedirect, "%d from %s: Location %q is not a URL reference: %v", res.status, u, res.location, perr)
		}
		hop.To = next.String()
		rt.Hops = append(rt.Hops, hop)
		next.Fragment, next.RawFragment = "", ""
		if visited[next.String()] {
			return fail(model.OutcomeRedirectLoop, "%d from %s back to %s, requested earlier in the chain", res.status, u, next)
		}
		if len(rt.Hops) > f.policy.MaxRedirects {
			if f.policy.MaxRedirects == 0 {
				return fail(model.OutcomeTooManyRedirects, "%d from %s to %s not followed: the policy follows no redirect", res.status, u, next)
			}
			return fail(model.OutcomeTooManyRedirects, "%d from %s to %s would be redirect %d; the policy follows at most %d", res.status, u, next, len(rt.Hops), f.policy.MaxRedirects)
		}
		u = next
	}
}

// check applies the scheme and port policy to a URL before it is
// requested.
func (f *Fetcher) check(u *url.URL) (outcome, msg string) {
	if !slices.Contains(f.policy.Schemes, u.Scheme) {
		return model.OutcomeUnsupportedScheme, fmt.Sprintf("%s: scheme %q is not one of %s", u, u.Scheme, strings.Join(f.policy.Schemes, ", "))
	}
	if u.Hostname() == "" {
		return model.OutcomeInvalidURL, fmt.Sprintf("%s: no host", u)
	}
	if f.policy.AllowPrivate {
		return "", ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	n, err := strconv.Atoi(port)
	if err != nil || !slices.Contains(f.policy.Ports, n) {
		return model.OutcomeBlockedPort, fmt.Sprintf("%s: port %s is not one the policy allows (%s)", u, port, joinInts(f.policy.Ports))
	}
	return "", ""
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// response is what request learned of one response that was a redirect.
type response struct {
	redirect bool
	status   int
	location string
	at       string
}

// request makes one GET request for u, within the policy's timeout and a
// slot of u's host. A redirect is returned for Fetch to follow; a final
// response, or a failure, is written into rt. The error is non-nil only
// when ctx was cancelled.
func (f *Fetcher) request(ctx context.Context, u *url.URL, rt *model.Retrieval, st *fetchState) (response, error) {
	host := strings.ToLower(u.Hostname())
	if err := f.hosts.acquire(ctx, host); err != nil {
		return response{}, err
	}
	defer f.hosts.release(host)
	rctx, cancel := context.WithTimeout(ctx, f.policy.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, u.String(), nil)
	if err != nil {
		rt.Outcome, rt.OutcomeError = model.OutcomeInvalidURL, err.Error()
		return response{}, nil
	}
	req.Header.Set("User-Agent", f.policy.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.8")
	req.Header.Set("Accept-Encoding", "identity")
	x := &exchange{date: f.now(), req: req}
	if f.capturer != nil {
		req = x.trace(req)
	}
	resp, err := f.transport.RoundTrip(req)
	if err != nil {
		if ctx.Err() != nil {
			return response{}, ctx.Err()
		}
		timedOut := rctx.Err() != nil
		rt.Outcome = outcomeOf(err, timedOut)
		if rt.Outcome == model.OutcomeTimeout {
			rt.OutcomeError = fmt.Sprintf("GET %s: no response within %v: %v", u, f.policy.Timeout, err)
		} else {
			rt.OutcomeError = fmt.Sprintf("GET %s: %v", u, err)
		}
		return response{}, nil
	}
	defer resp.Body.Close()
	at := f.stamp()
	if isRedirect(resp.StatusCode) {
		loc, ok := resp.Header["Location"]
		if ok && len(loc) > 0 {
			// Read a little of the body so the connection can be reused
			// (and captured).
			var hopBody []byte
			if f.capturer != nil {
				hopBody, _ = io.ReadAll(io.LimitReader(resp.Body, hopBodyLimit+1))
				trunc := len(hopBody) > hopBodyLimit
				f.capture(st, x, resp, hopBody[:min(len(hopBody), hopBodyLimit)], trunc)
			} else {
				io.Copy(io.Discard, io.LimitReader(resp.Body, hopBodyLimit))
			}
			return response{redirect: true, status: resp.StatusCode, location: loc[0], at: at}, nil
		}
	}
	// The final response.
	rt.FinalURL = u.String()
	rt.FinalStatus = model.Integer(strconv.Itoa(resp.StatusCode))
	rt.ContentType = resp.Header.Get("Content-Type")
	targets, dropped := LinkCanonicals(resp.Header.Values("Link"), MaxCanonicals)
	rt.CanonicalDropped += dropped
	var canon canonicalSet
	for _, c := range targets {
		canon.add(rt, resolveRef(u, c), model.SourceLinkHeader)
	}
	var kept *bytes.Buffer
	if st.keep {
		kept = &bytes.Buffer{}
	}
	readErr := f.readBody(resp.Body, u, rt, &canon, kept)
	if kept != nil && ctx.Err() == nil {
		b := kept.Bytes()
		st.body = &model.Body{Bytes: b[:min(len(b), int(f.policy.MaxBodyBytes))], Truncated: int64(len(b)) > f.policy.MaxBodyBytes}
		rt.SnapshotRef = f.capture(st, x, resp, st.body.Bytes, st.body.Truncated || readErr != nil)
	}
	switch {
	case ctx.Err() != nil:
		return response{}, ctx.Err()
	case readErr != nil && rctx.Err() != nil:
		rt.Outcome = model.OutcomeTimeout
		rt.OutcomeError = fmt.Sprintf("GET %s: body not read within %v: %v", u, f.policy.Timeout, readErr)
	case readErr != nil && errors.Is(readErr, errTooLarge):
		rt.Outcome = model.OutcomeBodyTooLarge
		rt.OutcomeError = fmt.Sprintf("GET %s: body longer than the policy's %d bytes; no content hash recorded", u, f.policy.MaxBodyBytes)
	case readErr != nil:
		rt.Outcome = model.OutcomeReadError
		rt.OutcomeError = fmt.Sprintf("GET %s: reading the body: %v", u, readErr)
	case isRedirect(resp.StatusCode):
		rt.Outcome = model.OutcomeInvalidRedirect
		rt.OutcomeError = fmt.Sprintf("GET %s: %s without a Location header", u, resp.Status)
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		rt.Outcome = model.OutcomeOK
	default:
		rt.Outcome = model.OutcomeHTTPError
		rt.OutcomeError = fmt.Sprintf("GET %s: %s", u, resp.Status)
	}
	return response{at: at}, nil
}

var errTooLarge = errors.New("body too large")

// hopBodyLimit is how much of a redirect's body is read (and captured).
const hopBodyLimit = 4 << 10

// readBody reads the final body up to the policy's limit, hashing it and,
// when it is HTML, reading canonical links from its head. The hash is set
// only when the whole body was read.
func (f *Fetcher) readBody(body io.Reader, u *url.URL, rt *model.Retrieval, canon *canonicalSet, kept *bytes.Buffer) error {
	h := sha256.New()
	lr := &io.LimitedReader{R: body, N: f.policy.MaxBodyBytes + 1}
	var sink io.Writer = h
	if kept != nil {
		sink = io.MultiWriter(h, kept)
	}
	br := bufio.NewReaderSize(io.TeeReader(lr, sink), 4096)
	if isHTML(rt.ContentType, br) {
		hrefs, base, dropped := HTMLCanonicals(br, MaxCanonicals)
		rt.CanonicalDropped += dropped
		baseURL := u
		if base != "" {
			if b, err := url.Parse(resolveRef(u, base)); err == nil {
				baseURL = b
			}
		}
		for _, href := range hrefs {
			canon.add(rt, resolveRef(baseURL, href), model.SourceHTMLLink)
		}
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return err
	}
	if lr.N == 0 {
		return errTooLarge
	}
	rt.ContentHash = "sha256:" + hex.EncodeToString(h.Sum(nil))
	return nil
}

// isHTML reports whether a body is HTML: by its Content-Type, or, when
// there is none, by sniffing its first bytes (WHATWG MIME Sniffing, as
// net/http implements it).
func isHTML(contentType string, br *bufio.Reader) bool {
	if contentType == "" {
		head, _ := br.Peek(512)
		contentType = http.DetectContentType(head)
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "text/html" || mt == "application/xhtml+xml")
}

// canonicalSet adds the canonical declarations of one response to its
// retrieval, each URL once per source, in time linear in their number (see
// distinct). Different URLs are all kept: conflicting canonicals are
// evidence.
type canonicalSet struct {
	seen map[model.Canonical]struct{} // rt.Canonical, once it is longer than smallSet
}

// add adds a declaration unless the same URL from the same source is there
// already or the URL is empty.
func (s *canonicalSet) add(rt *model.Retrieval, u, source string) {
	c := model.Canonical{URL: u, Source: source}
	if u == "" {
		return
	}
	if s.seen == nil {
		if slices.Contains(rt.Canonical, c) {
			return
		}
	} else if _, ok := s.seen[c]; ok {
		return
	}
	rt.Canonical = append(rt.Canonical, c)
	switch {
	case s.seen != nil:
		s.seen[c] = struct{}{}
	case len(rt.Canonical) > smallSet:
		s.seen = make(map[model.Canonical]struct{}, 2*len(rt.Canonical))
		for _, k := range rt.Canonical {
			s.seen[k] = struct{}{}
		}
	}
}

// hostLimiter bounds the requests to each host name at once.
type hostLimiter struct {
	mu    sync.Mutex
	limit int
	slots map[string]chan struct{}
	users map[string]int
}

func (l *hostLimiter) acquire(ctx context.Context, host string) error {
	l.mu.Lock()
	ch, ok := l.slots[host]
	if !ok {
		ch = make(chan struct{}, l.limit)
		l.slots[host] = ch
	}
	if l.users == nil {
		l.users = map[string]int{}
	}
	l.users[host]++
	l.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		l.done(host)
		return ctx.Err()
	}
}

func (l *hostLimiter) release(host string) {
	l.mu.Lock()
	ch := l.slots[host]
	l.mu.Unlock()
	<-ch
	l.done(host)
}

// done forgets a host's slots once nobody holds or waits for them, so the
// map does not grow with every host ever contacted.
func (l *hostLimiter) done(host string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.users[host]--
	if l.users[host] == 0 {
		delete(l.users, host)
		delete(l.slots, host)
	}
}
