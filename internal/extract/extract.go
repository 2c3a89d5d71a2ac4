package extract

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"
)

// Version names the extraction: this package's own version and the
// main-text extractor's module and version. It is recorded with every
// extraction, like a normalization policy's version, because any change of
// either can change the evidence. Raise the first part with every change of
// this package that can change a result; TestVersionMatchesGoMod keeps the
// second in step with go.mod.
const Version = "provgraph-extract/1 readability=codeberg.org/readeck/go-readability/v2@" + readabilityVersion

const readabilityVersion = "v2.1.3"

// Bounds on the work of one extraction. A page past them is still recorded,
// with what could be derived and a note saying why the rest was not.
const (
	// MaxBody is the most bytes of a body that are read; the rest is cut.
	MaxBody = 8 << 20
	// MaxDepth is the deepest element nesting given to Readability.
	MaxDepth = 512
	// MaxElements is the most elements given to Readability.
	MaxElements = 100_000
	// MaxTextBytes is the most bytes of main text kept.
	MaxTextBytes = 2 << 20
)

// Methods, as recorded in Evidence.Method.
const (
	MethodReadability = "readability" // Readability found an article
	MethodBodyText    = "body-text"   // no article: the body's text without scripts and styles
	MethodPlainText   = "plain-text"  // a text/plain body
	MethodNone        = "none"        // not a text type, or the page was past a bound
)

// Input is a retrieved response, as the fetcher or a stored capture gives it.
type Input struct {
	Body        []byte
	ContentType string // the Content-Type header, as sent
	Status      int    // the final status; 0 when there was no response
	URL         *url.URL
	// Truncated reports that the fetcher cut the body at its size limit.
	Truncated bool
}

// Evidence is what one extraction derives from one response.
type Evidence struct {
	Version       string         `json:"extractor"`
	MediaType     string         `json:"media_type"`
	Method        string         `json:"method"`
	Title         string         `json:"title,omitempty"`
	OGTitle       string         `json:"og_title,omitempty"`
	Language      string         `json:"language,omitempty"`
	Dates         []DeclaredDate `json:"dates,omitempty"`
	DatesDisagree bool           `json:"dates_disagree,omitempty"`
	// Text is the main text in normal form (NormalizeText).
	Text       string `json:"-"`
	Words      int    `json:"words"`
	TextDigest string `json:"text_digest,omitempty"`
	// SimHash is valid when HasSimHash is true (a text of one word or more).
	SimHash    uint64 `json:"-"`
	HasSimHash bool   `json:"-"`
	SoftError  string `json:"soft_error,omitempty"`
	// Problem says why less was derived than a page would give: the body
	// was cut, the page was past a bound, or bytes were not valid in the
	// declared charset. Empty when nothing went wrong.
	Problem string `json:"problem,omitempty"`
}

// Confirms reports whether the evidence can confirm identity: a 2xx
// response that reads as a page (no soft error) with a main text.
func (e Evidence) Confirms() bool {
	return e.SoftError == ClassOK && e.TextDigest != ""
}

// Extract derives the evidence of one response. It never fails: what cannot
// be derived is said in Evidence.Problem, so that a damaged page is an
// outcome recorded for that retrieval and nothing else is lost.
func Extract(in Input) Evidence {
	ev := Evidence{Version: Version, Method: MethodNone}
	mt, _, err := mime.ParseMediaType(in.ContentType)
	if err != nil {
		mt = strings.ToLower(strings.TrimSpace(strings.Split(in.ContentType, ";")[0]))
	}
	ev.MediaType = mt
	body := in.Body
	var problems []string
	if in.Truncated {
		problems = append(problems, "body cut by the fetcher's size limit")
	}
	if len(body) > MaxBody {
		body = body[:MaxBody]
		problems = append(problems, fmt.Sprintf("body cut at %d bytes for extraction", MaxBody))
	}
	var m meta
	switch mt {
	case "text/html", "application/xhtml+xml", "":
		if mt == "" && !looksLikeHTML(body) {
			break
		}
		text, p := decode(body, in.ContentType)
		if p != "" {
			problems = append(problems, p)
		}
		var method, problem string
		m, ev.Text, method, problem = fromHTML(text, in.URL)
		ev.Method = method
		if problem != "" {
			problems = append(problems, problem)
		}
	case "text/plain":
		text, p := decode(body, in.ContentType)
		if p != "" {
			problems = append(problems, p)
		}
		ev.Text, ev.Method = NormalizeText(text), MethodPlainText
	}
	if len(ev.Text) > MaxTextBytes {
		ev.Text = strings.ToValidUTF8(ev.Text[:MaxTextBytes], "")
		problems = append(problems, fmt.Sprintf("main text cut at %d bytes", MaxTextBytes))
	}
	ev.Title, ev.OGTitle, ev.Language, ev.Dates = m.title, m.ogTitle, m.lang, m.dates
	ev.DatesDisagree = DatesDisagree(m.dates)
	ev.Words = wordCount(ev.Text)
	// A cut body's text is not the page's text: it gets no digest, as a cut
	// body gets no content hash, but its SimHash still says what it is near.
	if !cut(in, body) {
		ev.TextDigest = TextDigest(ev.Text)
	}
	ev.SimHash, ev.HasSimHash = SimHash(ev.Text)
	if ev.Method == MethodNone && in.Status >= 200 && in.Status < 300 {
		ev.SoftError = ClassOK // not a text type: nothing to classify, and no digest to confirm with
	} else {
		ev.SoftError = Classify(in.Status, ev.Title, ev.Text, m.passwordField)
	}
	ev.Problem = strings.Join(problems, "; ")
	return ev
}

func cut(in Input, body []byte) bool { return in.Truncated || len(body) < len(in.Body) }

// looksLikeHTML sniffs a body sent without a Content-Type.
func looksLikeHTML(b []byte) bool {
	head := bytes.ToLower(bytes.TrimSpace(b[:min(len(b), 512)]))
	return bytes.HasPrefix(head, []byte("<!doctype html")) || bytes.Contains(head, []byte("<html"))
}

// decode turns a body into UTF-8 text by its declared or sniffed charset
// (WHATWG Encoding, golang.org/x/net/html/charset). Bytes that are not valid
// in that charset become U+FFFD, and the problem says how many.
func decode(body []byte, contentType string) (string, string) {
	enc, name, _ := charset.DetermineEncoding(body, contentType)
	var text string
	if name == "utf-8" {
		text = string(body)
	} else {
		out, err := enc.NewDecoder().Bytes(body)
		if err != nil {
			return strings.ToValidUTF8(string(body), "\uFFFD"), fmt.Sprintf("body not decodable as %s: %v", name, err)
		}
		text = string(out)
	}
	if utf8.ValidString(text) {
		return text, ""
	}
	bad := 0
	for s := text; len(s) > 0; {
		r, size := utf8.DecodeRuneInString(s)
		if r == utf8.RuneError && size == 1 {
			bad++
		}
		s = s[size:]
	}
	return strings.ToValidUTF8(text, "\uFFFD"), fmt.Sprintf("%d bytes not valid in the declared charset %s, read as U+FFFD", bad, name)
}

// fromHTML parses a page, reads its metadata and finds its main text.
func fromHTML(text string, pageURL *url.URL) (m meta, main, method, problem string) {
	// x/net/html refuses a document nested deeper than 512 elements; the
	// tokenizer measures it first so that the problem says so plainly.
	depth, elems := shape(text)
	if depth > MaxDepth {
		return m, "", MethodNone, fmt.Sprintf("page too complex for extraction: elements nested %d deep (limit %d)", depth, MaxDepth)
	}
	doc, err := html.Parse(strings.NewReader(text))
	if err != nil {
		return m, "", MethodNone, "not parseable as HTML: " + err.Error()
	}
	m = readMeta(doc)
	if elems > MaxElements {
		return m, "", MethodNone, fmt.Sprintf("page too complex for extraction: %d elements (limit %d)", elems, MaxElements)
	}
	if pageURL == nil {
		pageURL = &url.URL{Scheme: "https", Host: "invalid"}
	}
	p := readability.NewParser()
	p.MaxElemsToParse = MaxElements
	p.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	art, err := p.ParseAndMutate(doc, pageURL)
	if err == nil && art.Node != nil {
		var b strings.Builder
		if art.RenderText(&b) == nil {
			if t := NormalizeText(b.String()); t != "" {
				return m, t, MethodReadability, ""
			}
		}
	}
	// No article found: the body's text, without scripts, styles and
	// templates. doc may have been changed by Readability, so parse again.
	doc, err = html.Parse(strings.NewReader(text))
	if err != nil {
		return m, "", MethodNone, "not parseable as HTML: " + err.Error()
	}
	return m, NormalizeText(bodyText(doc)), MethodBodyText, ""
}

// shape measures a page's element nesting and count with the tokenizer, in
// linear time, before any tree is built.
func shape(text string) (maxDepth, elems int) {
	z := html.NewTokenizer(strings.NewReader(text))
	depth := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return maxDepth, elems
		case html.StartTagToken:
			elems++
			name, _ := z.TagName()
			if !voidElement(atom.Lookup(name)) {
				depth++
				maxDepth = max(maxDepth, depth)
			}
		case html.EndTagToken:
			if depth > 0 {
				depth--
			}
		case html.SelfClosingTagToken:
			elems++
		}
	}
}

func voidElement(a atom.Atom) bool {
	switch a {
	case atom.Area, atom.Base, atom.Br, atom.Col, atom.Embed, atom.Hr, atom.Img, atom.Input,
		atom.Link, atom.Meta, atom.Source, atom.Track, atom.Wbr, atom.P, atom.Li, atom.Option:
		// p, li and option close themselves implicitly so often that
		// counting them as nesting would call ordinary pages deep.
		return true
	}
	return false
}

// bodyText is the text of a document's body, with a space between blocks.
func bodyText(doc *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > MaxDepth || b.Len() > MaxTextBytes {
			return
		}
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Head:
				return
			}
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
		if n.Type == html.ElementNode {
			b.WriteByte(' ')
		}
	}
	walk(doc, 0)
	return b.String()
}
