package render_test

import (
	"testing"

	"github.com/provgraph/provgraph/internal/render"
)

// TestPlural: counts in messages read as English, the irregular endings
// the messages use included ("3409149 entrys written" was printed).
func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "entry", "1 entry"},
		{2, "entry", "2 entries"},
		{0, "changed key", "0 changed keys"},
		{3, "hash", "3 hashes"},
		{2, "match", "2 matches"},
		{2, "box", "2 boxes"},
		{2, "bus", "2 buses"},
		{5, "passage check", "5 passage checks"},
		{2, "hash-index run", "2 hash-index runs"},
		{2, "URL", "2 URLs"},
		{1, "quad", "1 quad"},
	} {
		if got := render.Plural(c.n, c.noun); got != c.want {
			t.Errorf("Plural(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
}
