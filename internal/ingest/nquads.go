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

// nquadsParser reads N-Triples and N-Quads (W3C RDF 1.1 N-Triples and
// N-Quads, §2 and the grammar in §7 / §5): one statement a line. It checks
// what a store needs and what a parser that replaces bad text would hide:
// UTF-8 (§2, "N-Quads files are encoded in UTF-8"), \u escapes that name no
// character (surrogates, past U+10FFFF), absolute IRIs and valid language
// tags, and reports each problem with its line and byte column.
type nquadsParser struct {
	name  string // the input's name, for messages
	quads bool   // N-Quads: a fourth term, the graph, is allowed
	line  int
	b     []byte // the current line, without its end of line
	i     int    // the position in b
}

// eachNQuad calls fn for every statement of r. Lines longer than
// MaxStatementBytes are an error: a line is one statement, and it is read
// into memory whole.
func eachNQuad(r io.Reader, name string, quads bool, fn func(graph.Quad) error) (int, error) {
	p := &nquadsParser{name: name, quads: quads}
	br := bufio.NewReaderSize(r, 1<<20)
	n := 0
	var long []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > MaxStatementBytes {
				return n, &SyntaxError{File: name, Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes, the limit for one N-Triples or N-Quads statement (is the input N-Triples or N-Quads, one statement a line?)", MaxStatementBytes)}
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
			long = nil
		}
		if len(line) > MaxStatementBytes {
			return n, &SyntaxError{File: name, Line: p.line + 1, Msg: fmt.Sprintf("line longer than %d bytes, the limit for one N-Triples or N-Quads statement (is the input N-Triples or N-Quads, one statement a line?)", MaxStatementBytes)}
		}
		if len(line) > 0 {
			p.line++
			line = trimEOL(line)
			// EOL is [#xD#xA]+: a carriage return alone also ends a
			// statement.
			for len(line) > 0 {
				seg := line
				cr := bytes.IndexByte(line, '\r')
				if cr >= 0 {
					seg, line = line[:cr], line[cr+1:]
				} else {
					line = nil
				}
				q, ok, perr := p.statement(seg)
				if perr != nil {
					return n, perr
				}
				if ok {
					if ferr := fn(q); ferr != nil {
						return n, ferr
					}
					n++
				}
			}
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("%s: reading after line %d: %w", name, p.line, err)
		}
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// fail returns a SyntaxError at byte offset at of the current line.
func (p *nquadsParser) fail(at int, format string, args ...any) error {
	return &SyntaxError{File: p.name, Line: p.line, Column: at + 1, Msg: fmt.Sprintf(format, args...)}
}

// statement parses one line; ok is false for a blank or comment line.
func (p *nquadsParser) statement(b []byte) (q graph.Quad, ok bool, err error) {
	p.b, p.i = b, 0
	p.space()
	if p.end() {
		return q, false, nil
	}
	what := "N-Triples statement"
	if p.quads {
		what = "N-Quads statement"
	}
	switch p.b[p.i] {
	case '<':
		q.S, err = p.iri()
	case '_':
		q.S, err = p.blank()
	default:
		return q, false, p.fail(p.i, "expected a subject (an IRI or a blank node), found %s", p.found())
	}
	if err != nil {
		return q, false, err
	}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '<' {
		return q, false, p.fail(p.i, "expected a predicate IRI, found %s", p.found())
	}
	if q.P, err = p.iri(); err != nil {
		return q, false, err
	}
	p.space()
	switch {
	case p.i >= len(p.b):
		return q, false, p.fail(p.i, "expected an object (an IRI, a blank node or a literal), found %s", p.found())
	case p.b[p.i] == '<':
		q.O, err = p.iri()
	case p.b[p.i] == '_':
		q.O, err = p.blank()
	case p.b[p.i] == '"':
		q.O, err = p.literal()
	default:
		return q, false, p.fail(p.i, "expected an object (an IRI, a blank node or a literal), found %s", p.found())
	}
	if err != nil {
		return q, false, err
	}
	p.space()
	if p.quads && p.i < len(p.b) {
		switch p.b[p.i] {
		case '<':
			q.G, err = p.iri()
		case '_':
			q.G, err = p.blank()
		}
		if err != nil {
			return q, false, err
		}
		p.space()
	}
	if p.i >= len(p.b) || p.b[p.i] != '.' {
		if p.quads {
			return q, false, p.fail(p.i, "expected a graph name or '.' ending the %s, found %s", what, p.found())
		}
		return q, false, p.fail(p.i, "expected '.' ending the %s, found %s", what, p.found())
	}
	p.i++
	p.space()
	if !p.end() {
		return q, false, p.fail(p.i, "expected the end of the line after '.', found %s (one statement a line)", p.found())
	}
	return q, true, nil
}

// space skips spaces and tabs.
func (p *nquadsParser) space() {
	for p.i < len(p.b) && (p.b[p.i] == ' ' || p.b[p.i] == '\t') {
		p.i++
	}
}

// end reports whether only a comment, or nothing, is left on the line.
func (p *nquadsParser) end() bool {
	return p.i >= len(p.b) || p.b[p.i] == '#'
}

// found names what stands at the current position, for messages.
func (p *nquadsParser) found() string {
	if p.i >= len(p.b) {
		return "the end of the line"
	}
	switch c := p.b[p.i]; c {
	case '<':
		return "an IRI"
	case '_':
		return "a blank node"
	case '"':
		return "a literal"
	case '#':
		return "a comment"
	case '\'':
		return "'\\'' (N-Quads literals take double quotes)"
	default:
		r, n := utf8.DecodeRune(p.b[p.i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("the byte 0x%02x, which is not UTF-8", c)
		}
		if r < 0x20 || r == 0x7f {
			return fmt.Sprintf("the control character %U", r)
		}
		return fmt.Sprintf("%q", r)
	}
}

// char decodes the rune at the current position, failing on bytes that
// are not UTF-8.
func (p *nquadsParser) char() (rune, int, error) {
	r, n := utf8.DecodeRune(p.b[p.i:])
	if r == utf8.RuneError && n <= 1 {
		return 0, 0, p.fail(p.i, "invalid UTF-8: byte 0x%02x (RDF text must be UTF-8; convert the file, e.g. with iconv)", p.b[p.i])
	}
	return r, n, nil
}

// escape decodes the \u or \U escape at the current position (UCHAR,
// N-Quads §5); it must name a Unicode scalar value.
func (p *nquadsParser) escape() (rune, error) {
	v, n, msg := decodeUCHAR(p.b[p.i:])
	if msg != "" {
		return 0, p.fail(p.i, "%s", msg)
	}
	p.i += n
	return v, nil
}

// iri parses an IRIREF (N-Quads §5): '<' ([^#x00-#x20<>"{}|^`\] | UCHAR)* '>'.
func (p *nquadsParser) iri() (graph.Term, error) {
	start := p.i
	p.i++ // '<'
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return graph.Term{}, p.fail(start, "IRI is not closed with '>'")
		}
		c := p.b[p.i]
		if c == '>' {
			p.i++
			break
		}
		var r rune
		switch {
		case c == '\\':
			if p.i+1 >= len(p.b) || (p.b[p.i+1] != 'u' && p.b[p.i+1] != 'U') {
				return graph.Term{}, p.fail(p.i, "only \\u and \\U escapes are allowed in an IRI")
			}
			at := p.i
			var err error
			if r, err = p.escape(); err != nil {
				return graph.Term{}, err
			}
			if r <= 0x20 || strings.ContainsRune("<>\"{}|^`\\", r) {
				return graph.Term{}, p.fail(at, "escaped character %q is not allowed in an IRI", r)
			}
		case c <= 0x20 || strings.IndexByte("<\"{}|^`", c) >= 0:
			return graph.Term{}, p.fail(p.i, "%s is not allowed in an IRI (percent-encode it)", iriByte(c))
		case c < utf8.RuneSelf:
			sb.WriteByte(c)
			p.i++
			continue
		default:
			var n int
			var err error
			if r, n, err = p.char(); err != nil {
				return graph.Term{}, err
			}
			p.i += n
		}
		sb.WriteRune(r)
	}
	s := sb.String()
	if !hasScheme(s) {
		return graph.Term{}, p.fail(start, "IRI <%s> is relative; N-Triples and N-Quads need absolute IRIs (with a scheme such as https:)", s)
	}
	return graph.IRI(s), nil
}

// iriByte names an ASCII character that IRIREF forbids, for messages.
func iriByte(c byte) string {
	switch {
	case c == ' ':
		return "a space"
	case c < 0x20:
		return fmt.Sprintf("the control character %U", rune(c))
	}
	return fmt.Sprintf("%q", rune(c))
}

// hasScheme reports whether s starts with scheme ":" (RFC 3986 §3.1:
// ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )).
func hasScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return true
		default:
			return false
		}
	}
	return false
}

// blank parses a BLANK_NODE_LABEL (N-Quads §5):
// '_:' (PN_CHARS_U | [0-9]) ((PN_CHARS | '.')* PN_CHARS)?
func (p *nquadsParser) blank() (graph.Term, error) {
	start := p.i
	if p.i+1 >= len(p.b) || p.b[p.i+1] != ':' {
		return graph.Term{}, p.fail(start, "expected '_:' starting a blank node label")
	}
	p.i += 2
	from := p.i
	if p.i >= len(p.b) {
		return graph.Term{}, p.fail(start, "blank node label is empty")
	}
	r, n, err := p.char()
	if err != nil {
		return graph.Term{}, err
	}
	if !isPNCharsU(r) && !(r >= '0' && r <= '9') {
		return graph.Term{}, p.fail(p.i, "blank node label cannot start with %q", r)
	}
	p.i += n
	for p.i < len(p.b) {
		r, n, err := p.char()
		if err != nil {
			return graph.Term{}, err
		}
		if !isPNChars(r) && r != '.' {
			break
		}
		p.i += n
	}
	for p.b[p.i-1] == '.' { // a label does not end with '.'
		p.i--
	}
	return graph.Blank(string(p.b[from:p.i])), nil
}

// literal parses a literal (N-Quads §5): STRING_LITERAL_QUOTE
// ('^^' IRIREF | LANGTAG)?.
func (p *nquadsParser) literal() (graph.Term, error) {
	start := p.i
	p.i++ // '"'
	var sb strings.Builder
	for {
		if p.i >= len(p.b) {
			return graph.Term{}, p.fail(start, "literal is not closed with '\"' on its line (write a line break inside it as \\n)")
		}
		c := p.b[p.i]
		if c == '"' {
			p.i++
			break
		}
		if c == '\\' {
			if p.i+1 >= len(p.b) {
				return graph.Term{}, p.fail(p.i, "'\\' at the end of the line")
			}
			var e byte
			switch p.b[p.i+1] {
			case 't':
				e = '\t'
			case 'b':
				e = '\b'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 'f':
				e = '\f'
			case '"', '\'', '\\':
				e = p.b[p.i+1]
			case 'u', 'U':
				r, err := p.escape()
				if err != nil {
					return graph.Term{}, err
				}
				sb.WriteRune(r)
				continue
			default:
				r, _ := utf8.DecodeRune(p.b[p.i+1:])
				return graph.Term{}, p.fail(p.i, "unknown escape \\%c (use \\t \\b \\n \\r \\f \\\" \\' \\\\ \\u or \\U)", r)
			}
			sb.WriteByte(e)
			p.i += 2
			continue
		}
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
			p.i++
			continue
		}
		r, n, err := p.char()
		if err != nil {
			return graph.Term{}, err
		}
		sb.WriteRune(r)
		p.i += n
	}
	lexical := sb.String()
	switch {
	case p.i+1 < len(p.b) && p.b[p.i] == '^' && p.b[p.i+1] == '^':
		p.i += 2
		if p.i >= len(p.b) || p.b[p.i] != '<' {
			return graph.Term{}, p.fail(p.i, "expected a datatype IRI after '^^', found %s", p.found())
		}
		at := p.i
		dt, err := p.iri()
		if err != nil {
			return graph.Term{}, err
		}
		if dt.Value == graph.RDFLangStr {
			return graph.Term{}, p.fail(at, "datatype rdf:langString needs a language tag: write \"...\"@en instead")
		}
		return graph.Literal(lexical, dt.Value), nil
	case p.i < len(p.b) && p.b[p.i] == '@':
		// LANGTAG ::= '@' [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*
		at := p.i
		p.i++
		from := p.i
		first, n := true, 0
		for ; p.i < len(p.b); p.i++ {
			c := p.b[p.i]
			switch {
			case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
				n++
				continue
			case c >= '0' && c <= '9' && !first:
				n++
				continue
			case c == '-' && n > 0:
				first, n = false, 0
				continue
			}
			break
		}
		if n == 0 {
			return graph.Term{}, p.fail(at, "bad language tag %q: want letters, then '-' and letters or digits (such as en or en-GB)", p.b[at:p.i])
		}
		return graph.LangString(lexical, string(p.b[from:p.i])), nil
	}
	return graph.String(lexical), nil
}

// isPNCharsBase reports PN_CHARS_BASE (N-Quads §5).
func isPNCharsBase(r rune) bool {
	switch {
	case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z',
		r >= 0x00C0 && r <= 0x00D6, r >= 0x00D8 && r <= 0x00F6, r >= 0x00F8 && r <= 0x02FF,
		r >= 0x0370 && r <= 0x037D, r >= 0x037F && r <= 0x1FFF, r >= 0x200C && r <= 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

// isPNCharsU reports PN_CHARS_U: PN_CHARS_BASE, '_' and ':'.
func isPNCharsU(r rune) bool { return isPNCharsBase(r) || r == '_' || r == ':' }

// isPNChars reports PN_CHARS.
func isPNChars(r rune) bool {
	return isPNCharsU(r) || r == '-' || (r >= '0' && r <= '9') || r == 0x00B7 ||
		(r >= 0x0300 && r <= 0x036F) || (r >= 0x203F && r <= 0x2040)
}
