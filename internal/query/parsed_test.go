package query

import (
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

// TestParseStoredOnce: a stored policy text is parsed once per text and
// source, and a text that does not parse keeps its error.
func TestParseStoredOnce(t *testing.T) {
	text := string(normalize.Default().Text())
	a, err := parseStored(text, "database:a")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := parseStored(text, "database:a"); b != a {
		t.Errorf("the same text parsed twice")
	}
	if c, _ := parseStored(text, "database:c"); c == a || c.Source() != "database:c" {
		t.Errorf("another source shares a parse: %v", c.Source())
	}
	if a.Digest() != normalize.Default().Digest() {
		t.Errorf("digest %s, want %s", a.Digest(), normalize.Default().Digest())
	}
	for range 2 {
		if _, err := parseStored("not = [toml", "database:bad"); err == nil {
			t.Errorf("a text that does not parse gave no error")
		}
	}
}
