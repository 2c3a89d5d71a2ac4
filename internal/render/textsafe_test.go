package render

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

var escapeTextTests = []struct {
	in, want string
}{
	{"plain text, with spaces", "plain text, with spaces"},
	{"", ""},
	{"naïve café 日本", "naïve café 日本"},
	{"\x1b[2Kerased", `"\x1b[2Kerased"`},
	{"\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\", `"\x1b]8;;https://evil.example/\x1b\\link\x1b]8;;\x1b\\"`},
	{"line\rover", `"line\rover"`},
	{"two\nlines", `"two\nlines"`},
	{"tab\there", `"tab\there"`},
	{"del\x7f", `"del\x7f"`},
	{"csi\u009b2K", `"csi\u009b2K"`},
	{"nel\u0085", `"nel\u0085"`},
	{"abc\u202edcba", `"abc\u202edcba"`},
	{"\u2066isolate\u2069", `"\u2066isolate\u2069"`},
	{"mark\u200f", `"mark\u200f"`},
	{"sep\u2028", `"sep\u2028"`},
	{"bad\xffbyte", `"bad\xffbyte"`},
	{`"looks quoted"`, `"\"looks quoted\""`},
	{`back\slash`, `back\slash`},
}

func TestEscapeText(t *testing.T) {
	for _, tt := range escapeTextTests {
		got := EscapeText(tt.in)
		if got != tt.want {
			t.Errorf("EscapeText(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if hasUnsafe(got) {
			t.Errorf("EscapeText(%q) = %q still holds an unsafe rune", tt.in, got)
		}
		// Round trip: a quoted value unquotes to the exact text.
		if got != tt.in {
			if back, err := strconv.Unquote(got); err != nil || back != tt.in {
				t.Errorf("strconv.Unquote(EscapeText(%q)) = %q, %v", tt.in, back, err)
			}
		}
	}
}

func TestEscapeLine(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"warning: ok", "warning: ok"},
		{"policy \x1b[31mred\u202e \xff", `policy \x1b[31mred\u202e \xff`},
		{`"quoted" is fine`, `"quoted" is fine`},
	} {
		if got := EscapeLine(tt.in); got != tt.want {
			t.Errorf("EscapeLine(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// hasUnsafeBytewise is hasUnsafe as it was before it passed over printable
// ASCII eight bytes at a time: the reference TestHasUnsafeWords holds it to.
func hasUnsafeBytewise(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || IsUnsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// TestHasUnsafeWords: every byte value, at every place of texts longer
// and shorter than a word, and random texts of printable ASCII with
// control, DEL, high and multi-byte characters mixed in, get the answer of
// the check a rune at a time.
func TestHasUnsafeWords(t *testing.T) {
	base := "https://example.com/a" // 21 printable bytes: two words and a tail
	for n := range len(base) + 1 {
		for at := range n {
			for c := range 256 {
				s := base[:at] + string([]byte{byte(c)}) + base[at+1:n]
				if got, want := hasUnsafe(s), hasUnsafeBytewise(s); got != want {
					t.Fatalf("hasUnsafe(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"a", "~", " ", "/", "\x1f", "\x7f", "\x00", "é", "日本", "\u202e", "\u0085", "\xff", "\xc3"}
	for range 20000 {
		var b strings.Builder
		for range rnd.IntN(40) {
			if rnd.IntN(4) == 0 {
				b.WriteString(pieces[rnd.IntN(len(pieces))])
			} else {
				b.WriteByte(byte(0x20 + rnd.IntN(0x5f)))
			}
		}
		s := b.String()
		if got, want := hasUnsafe(s), hasUnsafeBytewise(s); got != want {
			t.Fatalf("hasUnsafe(%q) = %v, want %v", s, got, want)
		}
	}
}

// TestEscapingWriter: each line of an error is escaped on its own, and the
// tabs that indent a line of a multi-problem error stay tabs, while a tab
// inside a line (input) is escaped.
func TestEscapingWriter(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain error\n", "plain error\n"},
		{"check: 2 problems:\n\tfirst\n\tsecond\n", "check: 2 problems:\n\tfirst\n\tsecond\n"},
		{"\t\tnested\n", "\t\tnested\n"},
		{"bad \x1b[2K name\n\tkey a\tb\n", "bad \\x1b[2K name\n\tkey a\\x09b\n"},
		{"\t\x1b]8;;x\x07\n", "\t\\x1b]8;;x\\x07\n"},
		{"no newline \r", "no newline \\x0d"},
	} {
		var b strings.Builder
		n, err := EscapingWriter{W: &b}.Write([]byte(c.in))
		if err != nil || n != len(c.in) {
			t.Errorf("Write(%q) = %d, %v; want %d, nil", c.in, n, err, len(c.in))
		}
		if b.String() != c.want {
			t.Errorf("Write(%q) wrote %q, want %q", c.in, b.String(), c.want)
		}
	}
}
