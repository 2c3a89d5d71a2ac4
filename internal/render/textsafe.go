package render

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Every value a text, table, CSV or DOT output shows comes from the input
// or from a fetched page, so it may hold bytes a terminal obeys: ESC and
// CSI sequences that move the cursor or erase a line, OSC 8 hyperlinks, a
// carriage return that overwrites the line, or a bidirectional override
// that shows the line in another order. Such a value is shown escaped, so
// that an audit report reads as what is stored.

// IsUnsafeRune reports whether a terminal may act on r instead of showing
// it: a C0 control, DEL, a C1 control (U+0080–U+009F), a bidirectional
// formatting character (U+061C, U+200E, U+200F, the embeddings and
// overrides U+202A–U+202E and the isolates U+2066–U+2069), or a line or
// paragraph separator (U+2028, U+2029).
func IsUnsafeRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r < 0xa0:
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x2028 && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// needsEscape reports whether text output must show s escaped: it holds
// an unsafe rune or invalid UTF-8, or it starts with a double quote and
// would otherwise read as an escaped value.
func needsEscape(s string) bool {
	return s != "" && s[0] == '"' || hasUnsafe(s)
}

// hasUnsafe reports whether s holds an unsafe rune or invalid UTF-8.
// Printable ASCII, what almost every URL and id is, is passed over eight
// bytes at a time: `groups` checks every text of every member it shows,
// and the check a byte at a time was a tenth of its CPU time.
func hasUnsafe(s string) bool {
	for i := 0; i < len(s); {
		if i+8 <= len(s) && printableASCII(uint64(s[i])|uint64(s[i+1])<<8|uint64(s[i+2])<<16|uint64(s[i+3])<<24|
			uint64(s[i+4])<<32|uint64(s[i+5])<<40|uint64(s[i+6])<<48|uint64(s[i+7])<<56) {
			i += 8
			continue
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || IsUnsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// printableASCII reports whether each byte of w is printable ASCII
// (0x20-0x7e): no byte has its high bit set, none is below 0x20, and none
// is 0x7f. With the high bits clear, subtracting 0x20 from each byte sets
// the high bit of the lowest byte below 0x20, if any, and of no byte when
// none is (a borrow is taken only past such a byte), and adding 1 to each
// sets a byte's high bit exactly when it was 0x7f (no carry leaves a byte).
func printableASCII(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	if w&highs != 0 {
		return false
	}
	return (w-0x20*ones)&highs == 0 && (w+ones)&highs == 0
}

// EscapeText returns s as it is when it is safe to print, and otherwise as
// a double-quoted Go string literal (strconv.Quote): ESC is \x1b, CR \r,
// U+009B \u009b, U+202E \u202e and an invalid byte \xNN. A value shown in
// double quotes is therefore always an escaped one, and strconv.Unquote
// gives back its exact text.
func EscapeText(s string) string {
	if needsEscape(s) {
		return strconv.Quote(s)
	}
	return s
}

// EscapeAll escapes each value of ss.
func EscapeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = EscapeText(s)
	}
	return out
}

// EscapeLine makes a message that is not a single value (a warning)
// safe to print on one line: unsafe runes and invalid bytes become \xNN or
// \uNNNN, the rest is kept.
func EscapeLine(s string) string {
	if !hasUnsafe(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case IsUnsafeRune(r) && r < 0x80:
			b.WriteString(`\x` + strconv.FormatUint(uint64(r)|0x100, 16)[1:])
		case IsUnsafeRune(r):
			b.WriteString(`\u` + strconv.FormatUint(uint64(r)|0x10000, 16)[1:])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// EscapingWriter writes text with EscapeLine applied to each line, for
// the error messages of exitCode: they quote input (a policy name from the
// database, a field of a rejected line) and go to a terminal. Tabs that
// begin a line are kept: they are the indentation of an error that lists
// several problems, one to a line, not input.
type EscapingWriter struct{ W io.Writer }

func (e EscapingWriter) Write(p []byte) (int, error) {
	lines := strings.Split(string(p), "\n")
	escaped := false
	for i, l := range lines {
		body := strings.TrimLeft(l, "\t")
		if hasUnsafe(body) {
			lines[i] = l[:len(l)-len(body)] + EscapeLine(body)
			escaped = true
		}
	}
	if !escaped {
		return e.W.Write(p)
	}
	if _, err := io.WriteString(e.W, strings.Join(lines, "\n")); err != nil {
		return 0, err
	}
	return len(p), nil
}
