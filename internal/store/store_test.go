package store_test

import (
	"fmt"
	"testing"

	"github.com/provgraph/provgraph/internal/store"
)

// TestDict checks the handle contract Dict gives a backend: equal texts,
// equal handles, within a field; fields apart; dense from 1; 0 absent.
func TestDict(t *testing.T) {
	var d store.Dict
	tests := []struct {
		f    store.Fields
		text string
		want store.Handle
	}{
		{store.FieldRaw, "https://a.test/", 1},
		{store.FieldRaw, "https://b.test/", 2},
		{store.FieldRaw, "https://a.test/", 1},
		{store.FieldKey, "https://b.test/", 1}, // another field, its own handles
		{store.FieldRaw, "HTTPS://A.TEST/", 3}, // exact text: not the same
		{store.FieldRaw, "", 4},                // the empty text is a value, not absence
	}
	for _, tt := range tests {
		if got := d.Intern(tt.f, tt.text); got != tt.want {
			t.Errorf("Intern(%d, %q) = %d, want %d", tt.f, tt.text, got, tt.want)
		}
		if got := d.Text(tt.f, tt.want); got != tt.text {
			t.Errorf("Text(%d, %d) = %q, want %q", tt.f, tt.want, got, tt.text)
		}
	}
	if d.Len(store.FieldRaw) != 4 || d.Len(store.FieldKey) != 1 || d.Len(store.FieldContent) != 0 {
		t.Errorf("Len = %d, %d, %d; want 4, 1, 0", d.Len(store.FieldRaw), d.Len(store.FieldKey), d.Len(store.FieldContent))
	}
	if got := d.Text(store.FieldRaw, 0); got != "" {
		t.Errorf("Text(0) = %q, want \"\"", got)
	}
	if got := d.Text(store.FieldRaw, 99); got != "" {
		t.Errorf("Text(99) = %q, want \"\"", got)
	}
}

func ExampleDict() {
	var d store.Dict
	a := d.Intern(store.FieldKey, "https://example.test/a")
	b := d.Intern(store.FieldKey, "https://example.test/b")
	fmt.Println(a, b, d.Intern(store.FieldKey, "https://example.test/a") == a, d.Text(store.FieldKey, b))
	// Output: 1 2 true https://example.test/b
}
