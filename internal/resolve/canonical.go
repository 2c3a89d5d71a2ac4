package resolve

import (
	"io"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Link is one link-value of an HTTP Link header (RFC 8288 §3): a target
// URI reference, exactly as written between < and >, and its parameters.
type Link struct {
	Target string
	Params []LinkParam
}

// LinkParam is one link-param: a name, lowercased (parameter names are
// case-insensitive, RFC 8288 §3), and its value with quoted-string escapes
// undone. A parameter without "=" has HasValue false.
type LinkParam struct {
	Name     string
	Value    string
	HasValue bool
}

// Rel returns the link's relation types: the first rel parameter's value
// split on whitespace and lowercased (RFC 8288 §3.3: a rel after the first
// is ignored; relation types compare case-insensitively).
func (l Link) Rel() []string {
	for _, p := range l.Params {
		if p.Name == "rel" {
			return strings.Fields(strings.ToLower(p.Value))
		}
	}
	return nil
}

// MaxCanonicals is how many distinct canonical URLs a Fetcher keeps from
// each signal source of one response: the Link header and the HTML head.
// Pages declare one, rarely two; a response declaring more is hostile or
// broken, and keeping every one would cost memory in proportion to the
// body. Declarations beyond the limit are counted in the retrieval's
// CanonicalDropped instead of kept.
const MaxCanonicals = 100

// ParseLinkHeader parses the values of the Link header fields of a
// response (RFC 8288 §3, with the list syntax of RFC 9110 §5.6.1). It is
// lenient, as a reader of evidence should be: a malformed link-value is
// skipped up to the next comma outside quotes and angle brackets, and the
// links around it are kept. It takes time linear in the length of the
// values.
func ParseLinkHeader(values []string) []Link {
	var links []Link
	eachLink(values, func(l Link) { links = append(links, l) })
	return links
}

// eachLink calls fn with each link of the Link header values, in order,
// without collecting them.
func eachLink(values []string, fn func(Link)) {
	for _, v := range values {
		p := linkParser{s: v}
		for {
			p.skip(" \t,")
			if p.i >= len(p.s) {
				break
			}
			if l, ok := p.link(); ok {
				fn(l)
			} else {
				p.skipValue()
			}
		}
	}
}

type linkParser struct {
	s string
	i int
}

func (p *linkParser) skip(set string) {
	for p.i < len(p.s) && strings.IndexByte(set, p.s[p.i]) >= 0 {
		p.i++
	}
}

// skipValue moves past the rest of a malformed link-value: to the next
// comma outside a quoted string and outside angle brackets.
func (p *linkParser) skipValue() {
	inQuote, inAngle := false, false
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case inQuote && c == '\\':
			p.i++
		case c == '"' && !inAngle:
			inQuote = !inQuote
		case c == '<' && !inQuote:
			inAngle = true
		case c == '>' && !inQuote:
			inAngle = false
		case c == ',' && !inQuote && !inAngle:
			p.i++
			return
		}
	}
}

// link parses one link-value at p.i. On failure the position is left
// where the error was found.
func (p *linkParser) link() (Link, bool) {
	if p.s[p.i] != '<' {
		return Link{}, false
	}
	end := strings.IndexByte(p.s[p.i+1:], '>')
	if end < 0 {
		p.i = len(p.s)
		return Link{}, false
	}
	l := Link{Target: p.s[p.i+1 : p.i+1+end]}
	p.i += end + 2
	for {
		p.skip(" \t")
		if p.i >= len(p.s) || p.s[p.i] == ',' {
			return l, true
		}
		if p.s[p.i] != ';' {
			return Link{}, false
		}
		p.i++
		p.skip(" \t")
		start := p.i
		for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
			p.i++
		}
		if p.i == start {
			if p.i >= len(p.s) || p.s[p.i] == ',' || p.s[p.i] == ';' {
				continue // an empty parameter: ";;" or a trailing ";"
			}
			return Link{}, false
		}
		param := LinkParam{Name: strings.ToLower(p.s[start:p.i])}
		p.skip(" \t")
		if p.i < len(p.s) && p.s[p.i] == '=' {
			p.i++
			p.skip(" \t")
			param.HasValue = true
			if p.i < len(p.s) && p.s[p.i] == '"' {
				v, ok := p.quoted()
				if !ok {
					return Link{}, false
				}
				param.Value = v
			} else {
				start := p.i
				for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
					p.i++
				}
				param.Value = p.s[start:p.i]
			}
		}
		l.Params = append(l.Params, param)
	}
}

// quoted reads a quoted-string (RFC 9110 §5.6.4) at p.i.
func (p *linkParser) quoted() (string, bool) {
	var b strings.Builder
	for p.i++; p.i < len(p.s); p.i++ {
		switch c := p.s[p.i]; c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			if p.i+1 >= len(p.s) {
				return "", false
			}
			p.i++
			b.WriteByte(p.s[p.i])
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

// isTokenChar reports whether c is a tchar (RFC 9110 §5.6.2).
func isTokenChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// LinkCanonicals returns the distinct targets of the links whose
// relation types include canonical, in order of first appearance, exactly
// as written: at most limit of them, and the number of further canonical
// links that were not kept. A repeat of a kept target is neither kept
// again nor counted.
func LinkCanonicals(values []string, limit int) (targets []string, dropped int) {
	var kept distinct
	eachLink(values, func(l Link) {
		for _, r := range l.Rel() {
			if r == "canonical" {
				dropped += kept.add(l.Target, limit)
				break
			}
		}
	})
	return kept.list, dropped
}

// distinct keeps up to a limit of distinct strings in order of first
// appearance, in time linear in the number offered: a few are compared
// one by one, as a page declares one or two, and a map takes over beyond
// smallSet.
type distinct struct {
	list []string
	seen map[string]struct{} // the strings of list, once it is longer than smallSet
}

// smallSet is the most strings a set compares one by one.
const smallSet = 8

// add keeps s unless it is kept already or limit strings are; it returns 1
// when s was a new string that did not fit, 0 otherwise.
func (d *distinct) add(s string, limit int) int {
	if d.has(s) {
		return 0
	}
	if len(d.list) >= limit {
		return 1
	}
	d.list = append(d.list, s)
	switch {
	case d.seen != nil:
		d.seen[s] = struct{}{}
	case len(d.list) > smallSet:
		d.seen = make(map[string]struct{}, 2*len(d.list))
		for _, k := range d.list {
			d.seen[k] = struct{}{}
		}
	}
	return 0
}

func (d *distinct) has(s string) bool {
	if d.seen == nil {
		return slices.Contains(d.list, s)
	}
	_, ok := d.seen[s]
	return ok
}

// maxHTMLBuf bounds the memory the HTML tokenizer may use for one token.
const maxHTMLBuf = 1 << 20

// HTMLCanonicals reads an HTML document's head and returns the distinct
// hrefs of the <link> elements whose rel includes canonical, in document
// order, exactly as written (entities decoded): at most limit of them, and
// the number of further canonical links that were not kept (a repeat of a
// kept href is neither kept again nor counted). It also returns the href
// of the first <base> that has one, which relative hrefs are resolved
// against (HTML §4.2.3). Memory is bounded by limit and the tokenizer's
// buffer, and time is linear in the length of the head.
//
// Only the head is read, because a canonical link is only honoured there:
// reading stops at <body>, at </head>, at the first element that cannot be
// in a head, and at text outside title, script, style and noscript,
// which is where an HTML parser starts the body (HTML §13.2.6.4).
// The tokenizer is golang.org/x/net/html's. Reading also stops at a token
// longer than 1 MiB.
func HTMLCanonicals(r io.Reader, limit int) (hrefs []string, base string, dropped int) {
	var kept distinct
	z := html.NewTokenizer(r)
	z.SetMaxBuf(maxHTMLBuf)
	haveBase := false
	var raw atom.Atom // the raw-text element we are inside, if any
	for {
		switch z.Next() {
		case html.ErrorToken:
			return kept.list, base, dropped
		case html.TextToken:
			if raw == 0 && strings.Trim(string(z.Text()), " \t\n\f\r") != "" {
				return kept.list, base, dropped
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Head || a == atom.Body || a == atom.Html {
				return kept.list, base, dropped
			}
			if a == raw {
				raw = 0
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.DataAtom {
			case atom.Html, atom.Head, atom.Meta:
			case atom.Title, atom.Script, atom.Style, atom.Noscript:
				raw = tok.DataAtom
			case atom.Base:
				if href, ok := attr(tok, "href"); ok && !haveBase {
					base, haveBase = href, true
				}
			case atom.Link:
				rel, _ := attr(tok, "rel")
				for _, r := range strings.Fields(strings.ToLower(rel)) {
					if r == "canonical" {
						if href, ok := attr(tok, "href"); ok {
							dropped += kept.add(href, limit)
						}
						break
					}
				}
			default:
				return kept.list, base, dropped
			}
		}
	}
}

func attr(t html.Token, name string) (string, bool) {
	for _, a := range t.Attr {
		if a.Namespace == "" && a.Key == name {
			return a.Val, true
		}
	}
	return "", false
}

// resolveRef resolves ref against base as a URL parser would, after
// trimming the leading and trailing ASCII whitespace and C0 controls an
// HTML attribute or URL parser ignores (URL §4.4 step 1). A reference that
// does not parse is returned trimmed, as observed.
func resolveRef(base *url.URL, ref string) string {
	ref = strings.TrimFunc(ref, func(r rune) bool { return r <= ' ' })
	u, err := url.Parse(ref)
	if err != nil || base == nil {
		return ref
	}
	return base.ResolveReference(u).String()
}
