package ingest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"regexp"
	"runtime"
	"strconv"
	"unicode/utf8"

	"github.com/knakk/rdf"

	"github.com/provgraph/provgraph/internal/graph"
)

// eachTurtle calls fn for every triple of the Turtle document r, parsed
// by knakk/rdf. knakk/rdf reads without limits, replaces bytes that are
// not UTF-8 and surrogate escapes with U+FFFD, and reports its own token
// numbers; a turtleReader in front of it checks each line first, and
// syntax errors are translated into words.
func eachTurtle(r io.Reader, name string, fn func(graph.Quad) error) (n int, err error) {
	tr := &turtleReader{name: name, br: bufio.NewReaderSize(r, 1<<20)}
	dec := rdf.NewTripleDecoder(tr, rdf.Turtle)
	for {
		t, derr := decodeTriple(dec)
		if tr.ioErr != nil {
			return n, fmt.Errorf("%s: reading after line %d: %w", name, tr.line, tr.ioErr)
		}
		if derr != nil {
			if errors.Is(derr, io.EOF) {
				if tr.err != nil {
					return n, tr.err
				}
				return n, nil
			}
			return n, tr.syntaxError(derr)
		}
		q := graph.Quad{S: turtleTerm(t.Subj), P: turtleTerm(t.Pred), O: turtleTerm(t.Obj)}
		if err := tr.checkQuad(q); err != nil {
			return n, err
		}
		if err := fn(q); err != nil {
			return n, err
		}
		n++
	}
}

// decodeTriple calls dec.Decode, turning a runtime panic in the parser
// into an error: knakk/rdf re-raises those.
func decodeTriple(dec rdf.TripleDecoder) (t rdf.Triple, err error) {
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(runtime.Error); !ok {
				panic(e)
			}
			err = fmt.Errorf("the Turtle parser failed: %v", e)
		}
	}()
	return dec.Decode()
}

// turtleTerm converts a knakk/rdf term, keeping a literal's lexical form.
func turtleTerm(t rdf.Term) graph.Term {
	switch v := t.(type) {
	case rdf.IRI:
		return graph.IRI(v.String())
	case rdf.Blank:
		label := v.String()
		if len(label) > 0 && label[0] == labelMark {
			return graph.Blank(label[1:]) // a label of the document
		}
		return graph.Blank("." + label) // one knakk/rdf made

	case rdf.Literal:
		if v.Lang() != "" {
			return graph.LangString(v.String(), v.Lang())
		}
		return graph.Literal(v.String(), v.DataType.String())
	}
	return graph.Term{}
}

// turtleReader hands knakk/rdf's Turtle lexer the input one line at a time
// (so the lexer's line is the reader's), after checking the line: at most
// MaxStatementBytes long, UTF-8, no \u escape that names no character, and
// no statement longer than MaxStatementBytes in all. At the first problem
// it records err and reports the end of the input, so the parser sees
// only lines that passed.
type turtleReader struct {
	name    string
	br      *bufio.Reader
	line    int    // lines handed out so far
	pending []byte // the part of the current line not yet handed out
	err     *SyntaxError
	ioErr   error
	done    bool
	recent  [2][]byte // the last two lines handed out, for columns
	// recentIns holds, for the same lines, where a label mark was
	// inserted (see check), to give columns in the input's bytes.
	recentIns [2][]int

	// Lexical state carried from one line to the next.
	long  byte // the quote of an open long string (""" or '''), or 0
	depth int  // open '[' and '('
	stmt  int  // bytes since the last '.' that may have ended a statement
}

func (t *turtleReader) Read(p []byte) (int, error) {
	for len(t.pending) == 0 {
		if t.done {
			return 0, io.EOF
		}
		line, err := t.next()
		if err != nil {
			t.done = true
			return 0, io.EOF
		}
		if line == nil {
			t.done = true
			return 0, io.EOF
		}
		t.pending = line
	}
	n := copy(p, t.pending)
	t.pending = t.pending[n:]
	return n, nil
}

// next reads and checks the next line.
func (t *turtleReader) next() ([]byte, error) {
	var long []byte
	for {
		chunk, err := t.br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long, chunk...)
			if len(long) > MaxStatementBytes {
				t.err = &SyntaxError{File: t.name, Line: t.line + 1, Msg: fmt.Sprintf("line longer than %d bytes, the limit for one Turtle statement", MaxStatementBytes)}
				return nil, t.err
			}
			continue
		}
		line := chunk
		if long != nil {
			line = append(long, chunk...)
		} else if len(line) > 0 {
			line = append([]byte(nil), line...) // ReadSlice's buffer is reused
		}
		if err != nil && err != io.EOF {
			t.ioErr = err
			return nil, err
		}
		if len(line) == 0 {
			return nil, nil
		}
		if len(line) > MaxStatementBytes {
			t.err = &SyntaxError{File: t.name, Line: t.line + 1, Msg: fmt.Sprintf("line longer than %d bytes, the limit for one Turtle statement", MaxStatementBytes)}
			return nil, t.err
		}
		t.line++
		ins, serr := t.check(line)
		if serr != nil {
			t.err = serr
			return nil, serr
		}
		if len(ins) > 0 {
			line = markLabels(line, ins)
		}
		t.recent[t.line%2], t.recentIns[t.line%2] = line, ins
		return line, nil
	}
}

// check checks one line and follows the lexical state: strings, IRIs and
// comments, where escapes may stand and where a '.' may end a statement.
// It returns where blank node labels start (after "_:"): knakk/rdf names
// the blank nodes of [] and ( ) _:b1, _:b2, ..., the labels a document may
// use itself, so each label of the document gets a mark (labelMark) in
// front that turtleTerm takes off again.
func (t *turtleReader) check(b []byte) (labels []int, _ *SyntaxError) {
	fail := func(at int, format string, args ...any) *SyntaxError {
		return &SyntaxError{File: t.name, Line: t.line, Column: at + 1, Msg: fmt.Sprintf(format, args...)}
	}
	if !utf8.Valid(b) {
		for i := 0; i < len(b); {
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				return nil, fail(i, "invalid UTF-8: byte 0x%02x (Turtle must be UTF-8; convert the file, e.g. with iconv)", b[i])
			}
			i += n
		}
	}
	// escape checks the \u or \U escape at i and returns its length.
	escape := func(i int) (int, *SyntaxError) {
		if i+1 >= len(b) || (b[i+1] != 'u' && b[i+1] != 'U') {
			return 2, nil
		}
		digits := 4
		if b[i+1] == 'U' {
			digits = 8
		}
		if i+2+digits > len(b) {
			return 2, nil // the parser reports the missing digits
		}
		v, err := strconv.ParseUint(string(b[i+2:i+2+digits]), 16, 32)
		if err != nil {
			return 2, nil
		}
		text := string(b[i : i+2+digits])
		switch {
		case v >= 0xD800 && v <= 0xDFFF:
			return 0, fail(i, "%s is a UTF-16 surrogate, not a character; write the character itself or escape its code point with \\U (e.g. \\U0001F600)", text)
		case v > utf8.MaxRune:
			return 0, fail(i, "%s is past U+10FFFF, the last Unicode code point", text)
		}
		return 2 + digits, nil
	}
	lastEnd := -1
	i := 0
scan:
	for i < len(b) {
		c := b[i]
		if t.long != 0 {
			switch {
			case c == '\\':
				n, err := escape(i)
				if err != nil {
					return nil, err
				}
				i += n
			case c == t.long && i+2 < len(b) && b[i+1] == c && b[i+2] == c:
				t.long = 0
				i += 3
			default:
				i++
			}
			continue
		}
		switch c {
		case '#':
			break scan
		case '<', '"', '\'':
			end := byte('>')
			if c != '<' {
				end = c
				if i+2 < len(b) && b[i+1] == c && b[i+2] == c {
					t.long = c
					i += 3
					continue
				}
			}
			// A short string or an IRI ends on its line.
			for i++; i < len(b) && b[i] != end && b[i] != '\n' && b[i] != '\r'; {
				if b[i] == '\\' {
					n, err := escape(i)
					if err != nil {
						return nil, err
					}
					i += n
					continue
				}
				i++
			}
		case '[', '(':
			t.depth++
		case ']', ')':
			if t.depth > 0 {
				t.depth--
			}
		case '.':
			if t.depth == 0 {
				lastEnd = i
			}
		case '\\':
			i++ // an escaped character in a local name
		case '_':
			if i+1 < len(b) && b[i+1] == ':' && (i == 0 || !isNameByte(b[i-1])) {
				labels = append(labels, i+2)
				i++
			}
		}
		i++
	}
	if lastEnd >= 0 {
		t.stmt = len(b) - lastEnd - 1
	} else {
		t.stmt += len(b)
	}
	if t.stmt > MaxStatementBytes {
		return nil, &SyntaxError{File: t.name, Line: t.line, Msg: fmt.Sprintf("statement longer than %d bytes, the limit for one Turtle statement (a long literal counts in full)", MaxStatementBytes)}
	}
	return labels, nil
}

// labelMark goes in front of each blank node label of a Turtle document.
// Labels the parser makes ([] and collections) get a '.' in front instead,
// which no label of a document can start with.
const labelMark = 'x'

// markLabels inserts labelMark at each offset of at (in order).
func markLabels(b []byte, at []int) []byte {
	out := make([]byte, 0, len(b)+len(at))
	prev := 0
	for _, i := range at {
		out = append(out, b[prev:i]...)
		out = append(out, labelMark)
		prev = i
	}
	return append(out, b[prev:]...)
}

// isNameByte reports a byte that can stand inside a prefixed name, so that
// "_:" after it is not the start of a blank node label (as in a_:b).
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c == '%' || c == '\\' || c >= utf8.RuneSelf
}

// checkQuad checks what the parser lets through and the store refuses:
// relative IRIs (knakk/rdf resolves against @base by concatenation, and
// leaves them relative without one) and malformed language tags.
func (t *turtleReader) checkQuad(q graph.Quad) error {
	for _, term := range []graph.Term{q.S, q.P, q.O} {
		var iri string
		switch {
		case term.Kind == graph.KindIRI:
			iri = term.Value
		case term.Kind == graph.KindLiteral && term.Lang == "":
			iri = term.Datatype
		case term.Kind == graph.KindLiteral:
			if !validLangTag(term.Lang) {
				return &SyntaxError{File: t.name, Line: t.line, Msg: fmt.Sprintf("bad language tag %q: want letters, then '-' and letters or digits (such as en or en-GB)", term.Lang)}
			}
			continue
		default:
			continue
		}
		if !hasScheme(iri) {
			return &SyntaxError{File: t.name, Line: t.line, Msg: fmt.Sprintf("IRI <%s> is relative; use an absolute IRI or declare @base <https://...> . before it", iri)}
		}
	}
	return nil
}

// validLangTag reports LANGTAG without its '@': [a-zA-Z]+ ('-' [a-zA-Z0-9]+)*.
func validLangTag(tag string) bool {
	first, n := true, 0
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			n++
		case c >= '0' && c <= '9' && !first:
			n++
		case c == '-' && n > 0:
			first, n = false, 0
		default:
			return false
		}
	}
	return n > 0
}

// The messages of knakk/rdf's Turtle parser: "L:C unexpected T as WHAT",
// "L:C: syntax error: TEXT", "L:C: expected triple termination, got T",
// and some without a position.
var (
	knakkPos         = regexp.MustCompile(`^(\d+):(\d+):? (.*)$`)
	knakkUnexpected  = regexp.MustCompile(`^unexpected (\d+) as (.*)$`)
	knakkTermination = regexp.MustCompile(`^expected triple termination, got (\d+)$`)
	knakkSyntax      = regexp.MustCompile(`^syntax error: (.*)$`)
	knakkPrefix      = regexp.MustCompile(`^missing namespace for prefix: '(.*)'$`)
)

// syntaxError turns an error of knakk/rdf's Turtle parser into a
// SyntaxError in words. Its line and column (1-based, in bytes) are the
// parser's; a message without a position gets the line the reader had
// reached, which is the statement's line or one just after it.
func (t *turtleReader) syntaxError(err error) error {
	msg := err.Error()
	line, col := 0, 0
	if m := knakkPos.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		col, _ = strconv.Atoi(m[2])
		col++ // knakk/rdf counts bytes from 0
		msg = m[3]
	}
	if t.err != nil && (line == 0 || line >= t.err.Line-1) {
		// The parser stopped where the reader did (the line before the
		// reader's error is the last it saw, and a long string open
		// there fails at its end): the reader's error comes first.
		return t.err
	}
	if line == 0 {
		line, col = t.line, 0
	}

	switch {
	case knakkUnexpected.MatchString(msg):
		m := knakkUnexpected.FindStringSubmatch(msg)
		msg = fmt.Sprintf("expected %s, found %s", turtleExpected(m[2]), turtleToken(m[1]))
		col = t.tokenColumn(line, col, m[1])
	case knakkTermination.MatchString(msg):
		m := knakkTermination.FindStringSubmatch(msg)
		msg = fmt.Sprintf("expected '.', ';' or ',' after the object, found %s", turtleToken(m[1]))
		col = t.tokenColumn(line, col, m[1])
	case knakkSyntax.MatchString(msg):
		msg = knakkSyntax.FindStringSubmatch(msg)[1]
	case knakkPrefix.MatchString(msg):
		p := knakkPrefix.FindStringSubmatch(msg)[1]
		msg = fmt.Sprintf("prefix %q is not declared: add @prefix %s: <https://...> . before its first use", p+":", p)
	}
	return &SyntaxError{File: t.name, Line: line, Column: t.inputColumn(line, col), Msg: msg}
}

// inputColumn turns a column of a line as the parser saw it into one of
// the input, taking off the label marks in front of it.
func (t *turtleReader) inputColumn(line, col int) int {
	if col == 0 || line < 1 || line > t.line || line < t.line-1 {
		return col
	}
	shift := 0
	for k, at := range t.recentIns[line%2] {
		if at+k < col-1 {
			shift++
		}
	}
	return col - shift
}

// tokenColumn corrects the column knakk/rdf's lexer gives a token that
// starts with a delimiter it skips: the column after '<' of an IRI, after
// the opening quote(s) of a literal, after '(', ')' and ']', and after '['
// and the blanks that follow it. It returns col unchanged for other tokens
// or when the line is no longer at hand.
func (t *turtleReader) tokenColumn(line, col int, typ string) int {
	if col == 0 {
		return 0
	}
	switch typ {
	case "3", "4", "6": // <IRI>, "literal"
		return col - 1
	case "7": // """literal"""
		return col - 3
	}
	var want byte
	switch typ {
	case "25", "26":
		want = '['
	case "27":
		want = ']'
	case "28":
		want = '('
	case "29":
		want = ')'
	default:
		return col
	}
	b := t.recent[line%2]
	if line < 1 || line > t.line || line < t.line-1 || col < 2 || col-2 >= len(b) {
		return col
	}
	for i := col - 2; i >= 0; i-- {
		switch b[i] {
		case want:
			return i + 1
		case ' ', '\t':
		case ']': // '[]', an anonymous blank node
			if typ != "25" {
				return col
			}
		default:
			return col
		}
	}
	return col
}

// turtleExpected says what knakk/rdf's parser wanted, by its context name.
func turtleExpected(context string) string {
	switch context {
	case "subject":
		return "a subject (an IRI, a prefixed name, a blank node or a collection)"
	case "predicate":
		return "a predicate IRI"
	case "object":
		return "an object (an IRI, a blank node, a literal or a collection)"
	case "dot (.)":
		return "'.'"
	case "prefix label":
		return "a prefix name ending with ':'"
	case "prefix IRI":
		return "the prefix's IRI"
	case "base IRI":
		return "the base IRI"
	case "directive trailing dot":
		return "'.' ending the directive"
	case "IRI suffix":
		return "a local name after the prefix"
	case "literal language":
		return "a language tag"
	case "literal datatype":
		return "a datatype IRI"
	}
	return context
}

// turtleToken names a knakk/rdf token type (its lexer's iota order).
func turtleToken(typ string) string {
	n, _ := strconv.Atoi(typ)
	names := []string{
		"the end of the input", "the end of the line", "an error", "an IRI", "a relative IRI",
		"a blank node", "a literal", "a long literal", "an integer", "a double", "a decimal",
		"a boolean", "'@'", "a language tag", "'^^'", "'.'", "';'", "','", "'a' (rdf:type)",
		"@prefix", "a prefixed name", "a local name", "@base", "PREFIX", "BASE", "'[]'",
		"'['", "']'", "'('", "')'",
	}
	if n >= 0 && n < len(names) {
		return names[n]
	}
	return "token " + typ
}
