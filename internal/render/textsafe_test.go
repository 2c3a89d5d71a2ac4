package render

import (
	"strconv"
	"testing"
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
