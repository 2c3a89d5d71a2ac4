package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/graph"
)

// maxTurtleDepth bounds the nesting of [ ] and ( ): each level is a frame
// of the parser's stack.
const maxTurtleDepth = 1000

const (
	rdfFirst   = "http://www.w3.org/1999/02/22-rdf-syntax-ns#first"
	rdfRest    = "http://www.w3.org/1999/02/22-rdf-syntax-ns#rest"
	rdfNil     = "http://www.w3.org/1999/02/22-rdf-syntax-ns#nil"
	rdfTypeIRI = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
	xsdDec     = "http://www.w3.org/2001/XMLSchema#decimal"
	xsdDbl     = "http://www.w3.org/2001/XMLSchema#double"
)

// turtleParser reads Turtle (W3C RDF 1.1 Turtle, the grammar of §6.5),
// streaming: it holds one line, or the lines of one long string, at a time.
// Like nquadsParser it checks rather than repairs: UTF-8, \u escapes that
// name no character, language tags, and absolute IRIs once resolved
// against @base (RFC 3986 §5.2). A line, and a statement, may be at most
// MaxStatementBytes long, and [ ] and ( ) nest at most maxTurtleDepth deep.
//
// Blank nodes keep the document's labels; those of [ ] and ( ) get labels
// starting with '.', which a document's labels cannot.
type turtleParser struct {
	name   string
	br     *bufio.Reader
	b      []byte // the current line, with its line break
	i      int    // position in b
	line   int    // number of the current line
	eof    bool
	stmt   int // bytes of the current statement read so far
	depth  int
	base   string
	prefix map[string]string
	bnodes int
	emit   func(graph.Quad) error
}

// eachTurtle calls fn for every triple of the Turtle document r.
func eachTurtle(r io.Reader, name string, fn func(graph.Quad) error) (int, error) {
	n := 0
	p := &turtleParser{name: name, br: bufio.NewReaderSize(r, 1<<20), prefix: map[string]string{}}
	p.emit = func(q graph.Quad) error {
		if err := fn(q); err != nil {
			return err
		}
		n++
		return nil
	}
	if err := p.document(); err != nil {
		return n, err
	}
	return n, nil
}

// fail returns a SyntaxError at byte offset at of the current line.
func (p *turtleParser) fail(at int, format string, args ...any) error {
	return &SyntaxError{File: p.name, Line: p.line, Column: at + 1, Msg: fmt.Sprintf(format, args...)}
}

// next loads the next line; at the end of the input it sets eof.
func (p *turtleParser) next() error {
	var long []byte
	for {
		chunk, err := p.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > MaxStatementBytes {
				return &SyntaxError{File: p.name, Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes, the limit for one Turtle statement", MaxStatementBytes)}
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: reading after line %d: %w", p.name, p.line, err)
		}
		if len(line) == 0 {
			p.eof = true
			p.b, p.i = nil, 0
			return nil
		}
		if len(line) > MaxStatementBytes {
			return &SyntaxError{File: p.name, Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes, the limit for one Turtle statement", MaxStatementBytes)}
		}
		p.line++
		p.b, p.i = line, 0
		if !utf8.Valid(line) {
			for i := 0; i < len(line); {
				r, n := utf8.DecodeRune(line[i:])
				if r == utf8.RuneError && n == 1 {
					return p.fail(i, "invalid UTF-8: byte 0x%02x (Turtle must be UTF-8; convert the file, e.g. with iconv)", line[i])
				}
				i += n
			}
		}
		p.stmt += len(line)
		if p.stmt > MaxStatementBytes {
			return &SyntaxError{File: p.name, Line: p.line, Msg: fmt.Sprintf("statement longer than %d bytes, the limit for one Turtle statement (a long literal counts in full)", MaxStatementBytes)}
		}
		return nil
	}
}

// space skips blanks, line breaks and comments, loading lines as needed.
func (p *turtleParser) space() error {
	for {
		for p.i < len(p.b) {
			switch p.b[p.i] {
			case ' ', '\t', '\r', '\n':
				p.i++
				continue
			case '#':
				p.i = len(p.b)
				continue
			}
			return nil
		}
		if p.eof {
			return nil
		}
		if err := p.next(); err != nil {
			return err
		}
		if p.eof {
			return nil
		}
	}
}

// runeAt decodes the rune at offset i of the current line; past its end it
// returns -1 (utf8.DecodeRune would return U+FFFD, a name character).
func (p *turtleParser) runeAt(i int) (rune, int) {
	if i >= len(p.b) {
		return -1, 0
	}
	return utf8.DecodeRune(p.b[i:])
}

// at returns the byte k ahead of the position on the current line, or 0.
func (p *turtleParser) at(k int) byte {
	if p.i+k < len(p.b) {
		return p.b[p.i+k]
	}
	return 0
}

// found names what stands at the current position, for messages.
func (p *turtleParser) found() string {
	if p.eof || p.i >= len(p.b) {
		return "the end of the input"
	}
	switch c := p.b[p.i]; c {
	case '<':
		return "an IRI"
	case '"', '\'':
		return "a literal"
	case '[':
		return "'['"
	case '(':
		return "'('"
	case '.', ';', ',', ']', ')':
		return fmt.Sprintf("'%c'", c)
	case '_':
		if p.at(1) == ':' {
			return "a blank node"
		}
	}
	if c := p.b[p.i]; c >= '0' && c <= '9' || c == '+' || c == '-' {
		return "a number"
	}
	r, _ := p.runeAt(p.i)
	if r < 0x20 || r == 0x7f {
		return fmt.Sprintf("the control character %U", r)
	}
	if isPNCharsBase(r) || r == ':' {
		end := p.i
		for end < len(p.b) && end-p.i < 40 {
			r, n := p.runeAt(end)
			if !isPNChars(r) && r != ':' && r != '.' {
				break
			}
			end += n
		}
		return fmt.Sprintf("%q", p.b[p.i:end])
	}
	return fmt.Sprintf("%q", r)
}

// endStatement starts counting a new statement after the current position.
func (p *turtleParser) endStatement() {
	p.stmt = len(p.b) - p.i
}

// document parses statement* (Turtle §6.5 [1]).
func (p *turtleParser) document() error {
	if err := p.next(); err != nil {
		return err
	}
	for {
		if err := p.space(); err != nil {
			return err
		}
		if p.eof {
			return nil
		}
		if err := p.statement(); err != nil {
			return err
		}
		p.endStatement()
	}
}

// keyword reports whether the word w stands at the position, followed by
// a blank or '<' (so that "prefix:x" is a name). @prefix and @base are
// written in lowercase; PREFIX and BASE in any case (Turtle §6.5 [5s],
// [6s]).
func (p *turtleParser) keyword(w string) bool {
	if p.i+len(w) >= len(p.b) {
		return false
	}
	word := string(p.b[p.i : p.i+len(w)])
	if w[0] == '@' && word != w || !strings.EqualFold(word, w) {
		return false
	}
	c := p.b[p.i+len(w)]
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '<' || c == '#'
}

// statement parses directive | triples '.'.
func (p *turtleParser) statement() error {
	switch {
	case p.at(0) == '@':
		switch {
		case p.keyword("@prefix"):
			p.i += len("@prefix")
			return p.prefixDirective(true)
		case p.keyword("@base"):
			p.i += len("@base")
			return p.baseDirective(true)
		}
		end := p.i + 1
		for end < len(p.b) && isASCIILetter(p.b[end]) {
			end++
		}
		return p.fail(p.i, "unknown directive %q: want @prefix or @base (in lowercase)", p.b[p.i:end])
	case p.keyword("PREFIX"):
		p.i += len("PREFIX")
		return p.prefixDirective(false)
	case p.keyword("BASE"):
		p.i += len("BASE")
		return p.baseDirective(false)
	}
	if err := p.triples(); err != nil {
		return err
	}
	if err := p.space(); err != nil {
		return err
	}
	if p.at(0) != '.' || p.eof {
		return p.fail(p.i, "expected '.', ';' or ',' after the object, found %s", p.found())
	}
	p.i++
	return nil
}

// prefixDirective parses the rest of @prefix / PREFIX: PNAME_NS IRIREF,
// and '.' after @prefix.
func (p *turtleParser) prefixDirective(dot bool) error {
	if err := p.space(); err != nil {
		return err
	}
	start := p.i
	name, err := p.pnPrefix()
	if err != nil {
		return err
	}
	if p.at(0) != ':' {
		return p.fail(start, "expected a prefix name ending with ':', found %s", p.found())
	}
	p.i++
	if err := p.space(); err != nil {
		return err
	}
	if p.at(0) != '<' {
		return p.fail(p.i, "expected the prefix's IRI, found %s", p.found())
	}
	iri, err := p.iriRef()
	if err != nil {
		return err
	}
	p.prefix[name] = iri
	return p.directiveEnd(dot)
}

// baseDirective parses the rest of @base / BASE: IRIREF, and '.' after
// @base.
func (p *turtleParser) baseDirective(dot bool) error {
	if err := p.space(); err != nil {
		return err
	}
	if p.at(0) != '<' {
		return p.fail(p.i, "expected the base IRI, found %s", p.found())
	}
	iri, err := p.iriRef()
	if err != nil {
		return err
	}
	p.base = iri
	return p.directiveEnd(dot)
}

func (p *turtleParser) directiveEnd(dot bool) error {
	if !dot {
		return nil
	}
	if err := p.space(); err != nil {
		return err
	}
	if p.at(0) != '.' || p.eof {
		return p.fail(p.i, "expected '.' ending the directive, found %s", p.found())
	}
	p.i++
	return nil
}

// triples parses subject predicateObjectList | blankNodePropertyList
// predicateObjectList?.
func (p *turtleParser) triples() error {
	if p.at(0) == '[' {
		anon, err := p.blankOrPropertyList()
		if err != nil {
			return err
		}
		if err := p.space(); err != nil {
			return err
		}
		if p.at(0) == '.' && !p.eof && anon.list {
			return nil
		}
		return p.predicateObjectList(anon.node, false)
	}
	var s graph.Term
	var err error
	switch c := p.at(0); {
	case c == '(':
		s, err = p.collection()
	case c == '<' || c == '_' && p.at(1) == ':' || c == ':' || c >= utf8.RuneSelf || isASCIILetter(c):
		s, err = p.subjectTerm()
	default:
		return p.fail(p.i, "expected a subject (an IRI, a prefixed name, a blank node or a collection), found %s", p.found())
	}
	if err != nil {
		return err
	}
	return p.predicateObjectList(s, false)
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// subjectTerm parses an IRI, a prefixed name or a blank node label.
func (p *turtleParser) subjectTerm() (graph.Term, error) {
	if p.at(0) == '_' && p.at(1) == ':' {
		return p.blankLabel()
	}
	start := p.i
	if !p.startsName() {
		return graph.Term{}, p.fail(start, "expected a subject (an IRI, a prefixed name, a blank node or a collection), found %s", p.found())
	}
	return p.iri()
}

// startsName reports whether an IRIREF or a prefixed name may start here.
func (p *turtleParser) startsName() bool {
	if p.at(0) == '<' || p.at(0) == ':' {
		return true
	}
	r, _ := p.runeAt(p.i)
	return isPNCharsBase(r)
}

type anonNode struct {
	node graph.Term
	list bool // a [ ... ] with properties, which may stand alone
}

// blankOrPropertyList parses ANON '[' WS* ']' or blankNodePropertyList
// '[' predicateObjectList ']', returning the node.
func (p *turtleParser) blankOrPropertyList() (anonNode, error) {
	open := p.i
	p.i++ // '['
	node := p.newBlank()
	if err := p.space(); err != nil {
		return anonNode{}, err
	}
	if p.at(0) == ']' && !p.eof {
		p.i++
		return anonNode{node: node}, nil
	}
	if err := p.enter(open); err != nil {
		return anonNode{}, err
	}
	if err := p.predicateObjectList(node, true); err != nil {
		return anonNode{}, err
	}
	if err := p.space(); err != nil {
		return anonNode{}, err
	}
	if p.at(0) != ']' || p.eof {
		return anonNode{}, p.fail(p.i, "expected ']' closing a '[', found %s", p.found())
	}
	p.i++
	p.depth--
	return anonNode{node: node, list: true}, nil
}

// enter counts one more level of nesting.
func (p *turtleParser) enter(at int) error {
	if p.depth++; p.depth > maxTurtleDepth {
		return p.fail(at, "[ ] and ( ) nest more than %d deep", maxTurtleDepth)
	}
	return nil
}

// newBlank returns a blank node of the parser's own.
func (p *turtleParser) newBlank() graph.Term {
	p.bnodes++
	return graph.Blank(fmt.Sprintf(".b%d", p.bnodes))
}

// collection parses '(' object* ')' and returns its head.
func (p *turtleParser) collection() (graph.Term, error) {
	open := p.i
	p.i++ // '('
	if err := p.enter(open); err != nil {
		return graph.Term{}, err
	}
	defer func() { p.depth-- }()
	var head, prev graph.Term
	for {
		if err := p.space(); err != nil {
			return graph.Term{}, err
		}
		if p.eof {
			return graph.Term{}, p.fail(p.i, "expected ')' closing a collection, found the end of the input")
		}
		if p.at(0) == ')' {
			p.i++
			break
		}
		node := p.newBlank()
		if head.IsZero() {
			head = node
		} else if err := p.emit(graph.Quad{S: prev, P: graph.IRI(rdfRest), O: node}); err != nil {
			return graph.Term{}, err
		}
		o, err := p.object()
		if err != nil {
			return graph.Term{}, err
		}
		if err := p.emit(graph.Quad{S: node, P: graph.IRI(rdfFirst), O: o}); err != nil {
			return graph.Term{}, err
		}
		prev = node
	}
	if head.IsZero() {
		return graph.IRI(rdfNil), nil
	}
	if err := p.emit(graph.Quad{S: prev, P: graph.IRI(rdfRest), O: graph.IRI(rdfNil)}); err != nil {
		return graph.Term{}, err
	}
	return head, nil
}

// predicateObjectList parses verb objectList (';' (verb objectList)?)*.
// inList says it stands in [ ], where ']' ends it.
func (p *turtleParser) predicateObjectList(s graph.Term, inList bool) error {
	for {
		if err := p.space(); err != nil {
			return err
		}
		pred, err := p.verb()
		if err != nil {
			return err
		}
		for {
			if err := p.space(); err != nil {
				return err
			}
			o, err := p.object()
			if err != nil {
				return err
			}
			if err := p.emit(graph.Quad{S: s, P: pred, O: o}); err != nil {
				return err
			}
			if err := p.space(); err != nil {
				return err
			}
			if p.at(0) != ',' || p.eof {
				break
			}
			p.i++
		}
		if p.at(0) != ';' || p.eof {
			return nil
		}
		// One or more ';', possibly ending the list.
		for p.at(0) == ';' && !p.eof {
			p.i++
			if err := p.space(); err != nil {
				return err
			}
		}
		if c := p.at(0); p.eof || c == '.' || (inList && c == ']') {
			return nil
		}
	}
}

// verb parses predicate | 'a'.
func (p *turtleParser) verb() (graph.Term, error) {
	if p.at(0) == 'a' && !p.eof {
		r, _ := p.runeAt(p.i + 1)
		if !isPNChars(r) && r != '.' && r != ':' {
			p.i++
			return graph.IRI(rdfTypeIRI), nil
		}
	}
	if p.eof || !p.startsName() {
		return graph.Term{}, p.fail(p.i, "expected a predicate IRI, found %s", p.found())
	}
	return p.iri()
}

// object parses iri | BlankNode | collection | blankNodePropertyList |
// literal.
func (p *turtleParser) object() (graph.Term, error) {
	if p.eof {
		return graph.Term{}, p.fail(p.i, "expected an object (an IRI, a blank node, a literal or a collection), found the end of the input")
	}
	switch c := p.at(0); {
	case c == '"' || c == '\'':
		return p.literal()
	case c == '[':
		a, err := p.blankOrPropertyList()
		return a.node, err
	case c == '(':
		return p.collection()
	case c == '_' && p.at(1) == ':':
		return p.blankLabel()
	case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' && p.at(1) >= '0' && p.at(1) <= '9':
		return p.number()
	case p.keywordTerm("true"), p.keywordTerm("false"):
		v := "true"
		if c == 'f' {
			v = "false"
		}
		p.i += len(v)
		return graph.Literal(v, graph.XSDBoolean), nil
	case p.startsName():
		return p.iri()
	}
	return graph.Term{}, p.fail(p.i, "expected an object (an IRI, a blank node, a literal or a collection), found %s", p.found())
}

// keywordTerm reports whether the word w (true, false) stands here, not
// followed by a name character.
func (p *turtleParser) keywordTerm(w string) bool {
	if !bytes.HasPrefix(p.b[p.i:], []byte(w)) {
		return false
	}
	r, _ := p.runeAt(p.i + len(w))
	return !isPNChars(r) && r != '.' && r != ':'
}

// number parses INTEGER, DECIMAL or DOUBLE (Turtle §6.5 [19]-[21]),
// keeping the lexical form.
func (p *turtleParser) number() (graph.Term, error) {
	start := p.i
	j := p.i
	if p.b[j] == '+' || p.b[j] == '-' {
		j++
	}
	digits := func() int {
		n := 0
		for j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9' {
			j++
			n++
		}
		return n
	}
	intDigits := digits()
	dt := graph.XSDInteger
	fracDigits := 0
	if j+1 < len(p.b) && p.b[j] == '.' && (p.b[j+1] >= '0' && p.b[j+1] <= '9' || (p.b[j+1] == 'e' || p.b[j+1] == 'E') && intDigits > 0) {
		j++
		fracDigits = digits()
		dt = xsdDec
	}
	if intDigits == 0 && fracDigits == 0 {
		return graph.Term{}, p.fail(start, "expected a number, found %q", p.b[start:min(j+1, len(p.b))])
	}
	if j < len(p.b) && (p.b[j] == 'e' || p.b[j] == 'E') {
		j++
		if j < len(p.b) && (p.b[j] == '+' || p.b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return graph.Term{}, p.fail(start, "number %q has an exponent without digits", p.b[start:j])
		}
		dt = xsdDbl
	} else if dt == xsdDec && fracDigits == 0 {
		// "1." is the integer 1 and the '.' ending the statement.
		j--
		dt = graph.XSDInteger
	}
	p.i = j
	return graph.Literal(string(p.b[start:j]), dt), nil
}

// escape decodes the \u or \U escape at the current position (UCHAR,
// Turtle §6.4); it must name a Unicode scalar value.
func (p *turtleParser) escape() (rune, error) {
	v, n, msg := decodeUCHAR(p.b[p.i:])
	if msg != "" {
		return 0, p.fail(p.i, "%s", msg)
	}
	p.i += n
	return v, nil
}

// decodeUCHAR decodes the UCHAR escape at the start of b ("\u" and 4 hex
// digits, or "\U" and 8), the same production in N-Triples, N-Quads and
// Turtle: the rune, the bytes it took, or a message saying what is wrong.
// A UTF-16 surrogate or a value past U+10FFFF names no character and is
// refused, never replaced.
func decodeUCHAR(b []byte) (rune, int, string) {
	digits := 4
	if len(b) > 1 && b[1] == 'U' {
		digits = 8
	}
	if len(b) < 2+digits {
		return 0, 0, fmt.Sprintf("\\%c needs %d hex digits", b[min(1, len(b)-1)], digits)
	}
	var v rune
	for _, c := range b[2 : 2+digits] {
		var d byte
		switch {
		case c >= '0' && c <= '9':
			d = c - '0'
		case c >= 'a' && c <= 'f':
			d = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, 0, fmt.Sprintf("\\%c needs %d hex digits, found %q", b[1], digits, b[2:2+digits])
		}
		v = v<<4 | rune(d)
	}
	text := string(b[:2+digits])
	switch {
	case v >= 0xD800 && v <= 0xDFFF:
		return 0, 0, text + " is a UTF-16 surrogate, not a character; write the character itself or escape its code point with \\U (e.g. \\U0001F600)"
	case v > utf8.MaxRune:
		return 0, 0, text + " is past U+10FFFF, the last Unicode code point"
	}
	return v, 2 + digits, ""
}

// iri parses IRIREF or a prefixed name and returns the absolute IRI.
func (p *turtleParser) iri() (graph.Term, error) {
	if p.at(0) == '<' {
		s, err := p.iriRef()
		if err != nil {
			return graph.Term{}, err
		}
		return graph.IRI(s), nil
	}
	start := p.i
	name, err := p.pnPrefix()
	if err != nil {
		return graph.Term{}, err
	}
	if p.at(0) != ':' {
		if name == "" {
			return graph.Term{}, p.fail(start, "expected an IRI, found %s", p.found())
		}
		return graph.Term{}, p.fail(start, "expected an IRI, found %q (a prefixed name needs ':'; the only bare word is 'a')", name)
	}
	p.i++
	ns, ok := p.prefix[name]
	if !ok {
		return graph.Term{}, p.fail(start, "prefix %q is not declared: add @prefix %s: <https://...> . before its first use", name+":", name)
	}
	local, err := p.pnLocal()
	if err != nil {
		return graph.Term{}, err
	}
	return graph.IRI(ns + local), nil
}

// pnPrefix parses PN_PREFIX, which may be empty:
// PN_CHARS_BASE ((PN_CHARS | '.')* PN_CHARS)?
func (p *turtleParser) pnPrefix() (string, error) {
	start := p.i
	r, n := p.runeAt(p.i)
	if !isPNCharsBase(r) {
		return "", nil
	}
	p.i += n
	for p.i < len(p.b) {
		r, n := p.runeAt(p.i)
		if r == ':' || !isPNChars(r) && r != '.' {
			break
		}
		p.i += n
	}
	for p.b[p.i-1] == '.' {
		p.i--
	}
	return string(p.b[start:p.i]), nil
}

// pnLocal parses PN_LOCAL (which may be empty), unescaping PN_LOCAL_ESC
// and keeping %HH as written.
func (p *turtleParser) pnLocal() (string, error) {
	var sb strings.Builder
	first := true
	lastDot := 0 // trailing '.' written, to give back
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '\\':
			e := p.at(1)
			if e == 0 || !strings.ContainsRune("_~.-!$&'()*+,;=/?#@%", rune(e)) {
				return "", p.fail(p.i, "'\\' in a local name escapes one of _~.-!$&'()*+,;=/?#@%%")
			}
			sb.WriteByte(e)
			p.i += 2
			lastDot = 0
		case c == '%':
			if !isHex(p.at(1)) || !isHex(p.at(2)) {
				return "", p.fail(p.i, "'%%' in a local name needs two hex digits")
			}
			sb.Write(p.b[p.i : p.i+3])
			p.i += 3
			lastDot = 0
		case c == '.' && !first:
			sb.WriteByte(c)
			p.i++
			lastDot++
		default:
			r, n := p.runeAt(p.i)
			ok := isPNChars(r) || r == ':'
			if first {
				ok = isPNCharsU(r) || r == ':' || r >= '0' && r <= '9'
			}
			if !ok {
				goto done
			}
			sb.WriteRune(r)
			p.i += n
			lastDot = 0
		}
		first = false
	}
done:
	// A local name does not end with '.': it ends the statement.
	p.i -= lastDot
	s := sb.String()
	return s[:len(s)-lastDot], nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// iriRef parses IRIREF and resolves it against the base (RFC 3986 §5.2).
func (p *turtleParser) iriRef() (string, error) {
	start := p.i
	p.i++ // '<'
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return "", p.fail(start, "IRI is not closed with '>'")
		}
		c := p.b[p.i]
		if c == '>' {
			p.i++
			break
		}
		switch {
		case c == '\\':
			if e := p.at(1); e != 'u' && e != 'U' {
				return "", p.fail(p.i, "only \\u and \\U escapes are allowed in an IRI")
			}
			at := p.i
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
				return "", p.fail(at, "escaped character %q is not allowed in an IRI", r)
			}
			sb.WriteRune(r)
		case c <= 0x20 || strings.IndexByte("<\"{}|^`", c) >= 0:
			return "", p.fail(p.i, "%s is not allowed in an IRI (percent-encode it)", iriByte(c))
		default:
			sb.WriteByte(c)
			p.i++
		}
	}
	ref := sb.String()
	if hasScheme(ref) {
		return ref, nil
	}
	if p.base == "" {
		return "", p.fail(start, "IRI <%s> is relative; use an absolute IRI or declare @base <https://...> . before it", ref)
	}
	return resolveIRI(p.base, ref), nil
}

// blankLabel parses BLANK_NODE_LABEL.
func (p *turtleParser) blankLabel() (graph.Term, error) {
	start := p.i
	p.i += 2 // "_:"
	from := p.i
	r, n := p.runeAt(p.i)
	if p.i >= len(p.b) || !isPNCharsU(r) && !(r >= '0' && r <= '9') {
		return graph.Term{}, p.fail(start, "a blank node label must start with a letter, '_' or a digit")
	}
	p.i += n
	for p.i < len(p.b) {
		r, n := p.runeAt(p.i)
		if !isPNChars(r) && r != '.' {
			break
		}
		p.i += n
	}
	for p.b[p.i-1] == '.' {
		p.i--
	}
	return graph.Blank(string(p.b[from:p.i])), nil
}

// literal parses RDFLiteral: String (LANGTAG | '^^' iri)?.
func (p *turtleParser) literal() (graph.Term, error) {
	start := p.i
	q := p.b[p.i]
	long := p.at(1) == q && p.at(2) == q
	var sb strings.Builder
	if long {
		p.i += 3
	} else {
		p.i++
	}
	startLine := p.line
	for {
		if p.i >= len(p.b) {
			if !long {
				return graph.Term{}, p.fail(start, "literal is not closed with %c on its line (a line break needs \\n or a long %c%c%c string)", q, q, q, q)
			}
			if p.eof {
				return graph.Term{}, &SyntaxError{File: p.name, Line: startLine, Column: start + 1, Msg: fmt.Sprintf("long string is not closed with %c%c%c", q, q, q)}
			}
			if err := p.next(); err != nil {
				return graph.Term{}, err
			}
			if p.eof {
				return graph.Term{}, &SyntaxError{File: p.name, Line: startLine, Column: start + 1, Msg: fmt.Sprintf("long string is not closed with %c%c%c", q, q, q)}
			}
			start = -1 // the opening quote is on an earlier line
			continue
		}
		c := p.b[p.i]
		switch {
		case c == q && (!long || p.at(1) == q && p.at(2) == q):
			if long {
				p.i += 3
			} else {
				p.i++
			}
			return p.literalEnd(sb.String())
		case c == '\\':
			e := p.at(1)
			switch e {
			case 'u', 'U':
				r, err := p.escape()
				if err != nil {
					return graph.Term{}, err
				}
				sb.WriteRune(r)
				continue
			case 't':
				sb.WriteByte('\t')
			case 'b':
				sb.WriteByte('\b')
			case 'n':
				sb.WriteByte('\n')
			case 'r':
				sb.WriteByte('\r')
			case 'f':
				sb.WriteByte('\f')
			case '"', '\'', '\\':
				sb.WriteByte(e)
			default:
				r, _ := p.runeAt(p.i + 1)
				return graph.Term{}, p.fail(p.i, "unknown escape \\%c (use \\t \\b \\n \\r \\f \\\" \\' \\\\ \\u or \\U)", r)
			}
			p.i += 2
		case !long && (c == '\n' || c == '\r'):
			return graph.Term{}, p.fail(max(start, 0), "literal is not closed with %c on its line (a line break needs \\n or a long %c%c%c string)", q, q, q, q)
		default:
			sb.WriteByte(c)
			p.i++
		}
	}
}

// literalEnd parses what may follow a string: a language tag or a
// datatype.
func (p *turtleParser) literalEnd(lexical string) (graph.Term, error) {
	switch {
	case p.at(0) == '@':
		// LANGTAG ::= '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*
		at := p.i
		p.i++
		from := p.i
		first, n := true, 0
	tag:
		for ; p.i < len(p.b); p.i++ {
			c := p.b[p.i]
			switch {
			case isASCIILetter(c):
				n++
			case c >= '0' && c <= '9' && !first:
				n++
			case c == '-' && n > 0:
				first, n = false, 0
			default:
				break tag
			}
		}
		if n == 0 {
			return graph.Term{}, p.fail(at, "bad language tag %q: want letters, then '-' and letters or digits (such as en or en-GB)", p.b[at:p.i])
		}
		return graph.LangString(lexical, string(p.b[from:p.i])), nil
	case p.at(0) == '^' && p.at(1) == '^':
		p.i += 2
		at := p.i
		if !p.startsName() {
			return graph.Term{}, p.fail(p.i, "expected a datatype IRI after '^^', found %s", p.found())
		}
		dt, err := p.iri()
		if err != nil {
			return graph.Term{}, err
		}
		if dt.Value == graph.RDFLangStr {
			return graph.Term{}, p.fail(at, "datatype rdf:langString needs a language tag: write \"...\"@en instead")
		}
		return graph.Literal(lexical, dt.Value), nil
	}
	return graph.String(lexical), nil
}

// resolveIRI resolves ref against base (RFC 3986 §5.2.2, with §5.2.3
// merge and §5.2.4 remove_dot_segments, recomposed as §5.3), on the text,
// escaping nothing.
func resolveIRI(base, ref string) string {
	b, r := splitIRI(base), splitIRI(ref)
	var t iriParts
	switch {
	case r.scheme != "":
		t = r
		t.path = removeDotSegments(r.path)
	case r.hasAuth:
		t = r
		t.scheme, t.path = b.scheme, removeDotSegments(r.path)
	default:
		t.scheme, t.auth, t.hasAuth = b.scheme, b.auth, b.hasAuth
		switch {
		case r.path == "":
			t.path, t.query = b.path, b.query
			if r.query != "" {
				t.query = r.query
			}
		case strings.HasPrefix(r.path, "/"):
			t.path, t.query = removeDotSegments(r.path), r.query
		default:
			merged := r.path
			if b.hasAuth && b.path == "" {
				merged = "/" + r.path
			} else if i := strings.LastIndexByte(b.path, '/'); i >= 0 {
				merged = b.path[:i+1] + r.path
			}
			t.path, t.query = removeDotSegments(merged), r.query
		}
	}
	t.fragment = r.fragment
	out := t.scheme + ":"
	if t.hasAuth {
		out += "//" + t.auth
	}
	return out + t.path + t.query + t.fragment
}

// iriParts are the components of an IRI reference; query and fragment
// keep their '?' and '#', so that "" means undefined.
type iriParts struct {
	scheme, auth, path, query, fragment string
	hasAuth                             bool
}

// splitIRI splits an IRI reference as the regular expression of RFC 3986
// Appendix B does.
func splitIRI(s string) iriParts {
	var p iriParts
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s, p.fragment = s[:i], s[i:]
	}
	if i := strings.IndexByte(s, '?'); i >= 0 {
		s, p.query = s[:i], s[i:]
	}
	if hasScheme(s) {
		i := strings.IndexByte(s, ':')
		p.scheme, s = s[:i], s[i+1:]
	}
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		i := strings.IndexByte(s, '/')
		if i < 0 {
			i = len(s)
		}
		p.auth, s, p.hasAuth = s[:i], s[i:], true
	}
	p.path = s
	return p
}

// removeDotSegments is RFC 3986 §5.2.4.
func removeDotSegments(in string) string {
	var out []string
	abs := strings.HasPrefix(in, "/")
	segs := strings.Split(in, "/")
	if abs {
		segs = segs[1:]
	}
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	res := strings.Join(out, "/")
	if abs {
		res = "/" + res
	}
	return res
}
