// Package fixtureweb serves a small web on loopback for tests: pages whose
// bytes change on every request while their article text does not, an
// article whose text changes between fetches, a syndicated copy on a
// second loopback address, AMP and print variants, a login wall, a soft
// 404 served with status 200, a real 404, a page whose declared dates
// disagree, and hostile pages (gigantic, nested too deep, bytes not in the
// declared charset). The passages a test cites (present, paraphrased,
// absent) are exported with the article they are checked against.
//
// What the extractor makes of it (asserted by
// internal/ingest TestResolveEvidenceOnFixtureWeb): Guide (every fetch),
// Moved, AMP, Print and the syndicated copy have one text digest; two
// fetches of Changing differ by a SimHash distance far above
// extract.NearThreshold; Login, Soft404 and NotFound are login-wall,
// soft-404 and http-4xx; Dates has dates that disagree; Huge, Deep and
// BadCharset are recorded with a problem; PassagePresent is found exactly,
// the other two passages are not found.
//
// Why a package: the resolve, ingest and CLI tests use it, and so will the
// tests of the verdicts that are derived from its evidence, so that every
// layer is asserted against one web whose expected answers are written
// down here once.
//
// It is for tests only: it imports the standard library alone, and no
// package but tests may import it.
package fixtureweb

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// Hosts: every page is on HostA; the syndicated copy is on HostB, served
// from a second loopback address (127.0.0.2) when the system has one.
const (
	HostA = "news.test"
	HostB = "syndicate.test"
)

// Paths of the pages on HostA (SyndicatedPath is on HostB).
const (
	Guide          = "/guide"       // bytes change per request, article text does not
	Moved          = "/moved"       // 301 to Guide
	Changing       = "/changing"    // the article text changes on every fetch
	AMP            = "/guide/amp"   // the guide in another template (AMP)
	Print          = "/guide/print" // the guide without navigation (print)
	Login          = "/account"     // a login wall, status 200
	Soft404        = "/old-story"   // a "page not found" page, status 200
	NotFound       = "/gone"        // a 404
	Dates          = "/dated"       // declared dates that disagree
	Huge           = "/huge"        // a body over extract.MaxBody
	Deep           = "/deep"        // elements nested past extract.MaxDepth
	BadCharset     = "/latin1"      // declared UTF-8, sent in Latin-1
	SyndicatedPath = "/wire/guide"  // on HostB: the guide's article in another site's template
	DatesPublished = "2025-03-04T08:00:00Z"
	DatesOther     = "2024-11-20T10:30:00Z"
)

// Article is the guide's article text: the paragraphs every variant of the
// guide carries (Guide, AMP, Print, SyndicatedPath).
var Article = []string{
	"Tidal energy researchers in Brest have finished a three-year trial of a floating turbine that produced power through two winter storms without a single unplanned shutdown, according to the final report published on Tuesday.",
	"The turbine, moored in the Fromveur passage between the islands of Ushant and Molène, delivered an average of 1.1 megawatts during spring tides, enough to supply about a third of the households on Ushant.",
	"Engineers said the most important result was not the output but the maintenance record: the blades were inspected from a service boat in calm water instead of being lifted out by crane, which cut the cost of each inspection by roughly two thirds.",
	"The regional council has set aside funding for a second machine, and the operator expects to apply for a grid connection for a small array of four turbines before the end of next year.",
}

// The passages a test cites from the guide.
var (
	// PassagePresent is a sentence of the article, with its quotes and
	// white space retyped as answer engines do.
	PassagePresent = "The turbine, moored in the Fromveur passage between the islands of Ushant and Molène, delivered an average of 1.1 megawatts during spring tides"
	// PassageParaphrased says what the article says in other words.
	PassageParaphrased = "A French tidal turbine kept running through storms and could power a third of an island's homes, engineers reported."
	// PassageAbsent is not in the article at all.
	PassageAbsent = "The mayor of Brest announced a new tram line linking the harbour to the university campus."
)

// Web is the fixture web, running.
type Web struct {
	A, B *httptest.Server
	// requests counts the requests answered, so a test can see that
	// nothing was fetched.
	requests atomic.Int64
	changing atomic.Int64
	addrB    string // the IP HostB is served from
}

// Requests returns how many requests the web has answered.
func (w *Web) Requests() int64 { return w.requests.Load() }

// Start serves the web until the test ends.
func Start(t testing.TB) *Web {
	t.Helper()
	w := &Web{}
	w.A = httptest.NewServer(http.HandlerFunc(w.serveA))
	t.Cleanup(w.A.Close)
	w.B = httptest.NewUnstartedServer(http.HandlerFunc(w.serveB))
	w.addrB = "127.0.0.2"
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err == nil {
		w.B.Listener.Close()
		w.B.Listener = l
	} else {
		w.addrB = "127.0.0.1" // no second loopback address here: the port tells the hosts apart
	}
	w.B.Start()
	t.Cleanup(w.B.Close)
	return w
}

// URL returns the URL of a path on HostA.
func (w *Web) URL(path string) string { return "http://" + HostA + ":" + port(w.A) + path }

// SyndicatedURL returns the URL of the syndicated copy on HostB.
func (w *Web) SyndicatedURL() string {
	return "http://" + HostB + ":" + port(w.B) + SyndicatedPath
}

// LookupHost maps HostA and HostB to their loopback addresses, for
// resolve.Options.LookupHost.
func (w *Web) LookupHost(_ context.Context, host string) ([]netip.Addr, error) {
	switch host {
	case HostA:
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	case HostB:
		return []netip.Addr{netip.MustParseAddr(w.addrB)}, nil
	}
	return nil, errors.New("no such host in the fixture web")
}

// AddrB is the IP address HostB is served from.
func (w *Web) AddrB() string { return w.addrB }

func port(s *httptest.Server) string {
	_, p, _ := net.SplitHostPort(s.Listener.Addr().String())
	return p
}

// page writes an HTML page: head, a navigation bar, the article and a
// footer. extra goes into the head; noise into an aside and the footer, so
// that the bytes differ while the article does not.
func page(title, head, nav string, paragraphs []string, noise string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>%s</title>\n<meta property=\"og:title\" content=\"%s\">%s</head>\n<body>\n", title, title, head)
	if nav != "" {
		fmt.Fprintf(&b, "<nav><a href=\"/\">Home</a> <a href=\"/world\">World</a> <a href=\"/energy\">Energy</a> %s</nav>\n", nav)
	}
	b.WriteString("<main><article><h1>" + title + "</h1>\n")
	for _, p := range paragraphs {
		b.WriteString("<p>" + p + "</p>\n")
	}
	b.WriteString("</article></main>\n")
	if noise != "" {
		fmt.Fprintf(&b, "<aside class=\"trending\"><h2>Trending</h2><ul><li><a href=\"/t/%s\">Story %s</a></li></ul></aside>\n", noise, noise)
	}
	fmt.Fprintf(&b, "<footer>© Harbour News. Rendered %s. <form><input type=hidden name=csrf value=\"%s\"></form></footer>\n</body></html>\n", noise, noise)
	return b.String()
}

const guideTitle = "Floating tidal turbine ends three-year trial off Ushant"

func (w *Web) serveA(rw http.ResponseWriter, r *http.Request) {
	n := w.requests.Add(1)
	noise := fmt.Sprintf("%d-%x", n, n*2654435761)
	html := func(status int, body string) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		rw.WriteHeader(status)
		fmt.Fprint(rw, body)
	}
	switch r.URL.Path {
	case Guide:
		html(200, page(guideTitle, "", "<a href=\"/login\">Sign in</a>", Article, noise))
	case Moved:
		http.Redirect(rw, r, Guide, http.StatusMovedPermanently)
	case Changing:
		k := w.changing.Add(1)
		html(200, page("Live: harbour works", "", "", []string{
			fmt.Sprintf("Update %d: the harbour works have reached stage %d, and the contractor now expects the quay to reopen in week %d, weather permitting, with the ferries returning to their usual berth soon after.", k, k, 10+k),
			fmt.Sprintf("Update %d: divers inspected %d of the old piles this morning and found %d of them in need of repair, more than the survey had predicted, which may delay the work again.", k, 3*k, k),
		}, noise))
	case AMP:
		html(200, page(guideTitle, `<link rel="canonical" href="`+w.URL(Guide)+`"><style amp-custom>body{font:16px serif}</style>`, "", Article, noise))
	case Print:
		html(200, page(guideTitle, `<link rel="canonical" href="`+w.URL(Guide)+`">`, "", Article, ""))
	case Login:
		html(200, `<!doctype html><html><head><title>Sign in to Harbour News</title></head><body><main><h1>Sign in</h1><p>Subscribe or sign in to continue reading this story.</p><form><input name="user"><input type="password" name="pass"><button>Sign in</button></form></main></body></html>`)
	case Soft404:
		html(200, `<!doctype html><html><head><title>Page not found | Harbour News</title></head><body><nav><a href="/">Home</a></nav><main><h1>Page not found</h1><p>Sorry, the page you were looking for does not exist or has been moved.</p></main></body></html>`)
	case NotFound:
		html(404, `<!doctype html><html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>The requested URL was not found on this server.</p></body></html>`)
	case Dates:
		head := `<meta property="article:published_time" content="` + DatesPublished + `">` +
			`<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","datePublished":"` + DatesOther + `"}</script>`
		html(200, page("Ferry timetable changes for the winter", head, "", []string{
			"The ferry operator will run two crossings a day to Ushant from the first of November, instead of three, and the evening boat will leave half an hour earlier than in the summer timetable.",
			"Passengers with bicycles are asked to book in advance, because the smaller winter vessel carries no more than twelve of them on each crossing, and freight will travel on the morning boat only.",
		}, noise))
	case Huge:
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(rw, "<!doctype html><html><head><title>Huge</title></head><body><p>")
		chunk := strings.Repeat("all work and no play makes a very long page. ", 1000)
		for range 9 << 20 / len(chunk) {
			fmt.Fprint(rw, chunk)
		}
		fmt.Fprint(rw, "</p></body></html>")
	case Deep:
		html(200, "<!doctype html><html><head><title>Deep</title></head><body>"+strings.Repeat("<div>", 2000)+"deep"+strings.Repeat("</div>", 2000)+"</body></html>")
	case BadCharset:
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		// "Molène" and "Ushant" in Latin-1: the è is the byte 0xE8, not
		// valid UTF-8.
		fmt.Fprint(rw, "<!doctype html><html><head><title>Mol\xe8ne</title></head><body><article><p>The island of Mol\xe8ne lies between Ushant and the mainland, and its harbour is sheltered from the western swell by a long granite breakwater built in the nineteenth century.</p></article></body></html>")
	default:
		http.NotFound(rw, r)
	}
}

func (w *Web) serveB(rw http.ResponseWriter, r *http.Request) {
	n := w.requests.Add(1)
	if r.URL.Path != SyndicatedPath {
		http.NotFound(rw, r)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(rw, page(guideTitle+" | Wire", "", "<a href=\"/markets\">Markets</a>", Article, fmt.Sprintf("wire-%d", n)))
}
