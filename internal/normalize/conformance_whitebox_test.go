package normalize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestIDNAHyphens checks the assumption aceLabelError's fast path rests
// on: with the IDNA tables in use, the only code points that map to
// something containing "-" are "-" itself, U+FE63 and U+FF0D. A table
// update that breaks it fails here instead of letting a Punycode label
// through unchecked.
func TestIDNAHyphens(t *testing.T) {
	for c := rune(0x80); c <= utf8.MaxRune; c++ {
		if 0xD800 <= c && c <= 0xDFFF {
			continue
		}
		m, _ := idnaMapper.ToUnicode(string(c))
		if strings.Contains(m, "-") && c != '\uFE63' && c != '\uFF0D' {
			t.Errorf("idna maps %U to %q, which contains \"-\": add it to aceLabelError", c, m)
		}
	}
}
