package citestore

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

// TestStepRules checks the scan that reads rule names out of a stored
// step log against a JSON parse of the same log, on URLs whose text looks
// like the member it looks for.
func TestStepRules(t *testing.T) {
	p, err := normalize.LoadPolicy("lenient")
	if err != nil {
		t.Fatal(err)
	}
	n, err := normalize.New(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	urls := []string{
		"HTTP://Example.COM:80/a/../b?utm_source=x#f",
		`https://example.com/"rule":"fake"?q="rule":"x"`,
		`https://EXAMPLE.com/%7euser/\"rule\":\"y\"`,
		"https://example.com/",
		"https://xn--nxasmq6b.example/%41%2F",
	}
	for _, u := range urls {
		res, err := n.Normalize(u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		log, err := json.Marshal(res.Steps())
		if err != nil {
			t.Fatal(err)
		}
		var parsed []normalize.Step
		if err := json.Unmarshal(log, &parsed); err != nil {
			t.Fatal(err)
		}
		want := rulesOf(parsed)
		if got := stepRules(string(log)); !slices.Equal(got, want) {
			t.Errorf("%s: stepRules(%s) = %q, want %q", u, log, got, want)
		}
		// What the scan keeps of a log (stepLog) names the same rules.
		if got := stepRules(stepLog(log)); !slices.Equal(got, want) {
			t.Errorf("%s: stepRules(stepLog(%s)) = %q, want %q", u, log, got, want)
		}
	}
	if got := stepLog([]byte("null")); got != "" {
		t.Errorf("stepLog(null) = %q, want empty", got)
	}
	if got := stepRules("null"); got != nil {
		t.Errorf("stepRules(null) = %q, want none", got)
	}
}
