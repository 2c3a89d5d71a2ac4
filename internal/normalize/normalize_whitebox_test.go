package normalize

import (
	"encoding/json"
	"os"
	"testing"
)

// FuzzEveryParseChangeIsLogged checks the invariant Normalize relies on to
// skip serializing: when the parse logs no step, the serialized URL is the
// input itself. A normalization that changed the URL without logging a step
// would break the promise that every transformation is in the log.
func FuzzEveryParseChangeIsLogged(f *testing.F) {
	data, err := os.ReadFile("testdata/adversarial.json")
	if err != nil {
		f.Fatal(err)
	}
	var a struct {
		Cases []struct{ Input string } `json:"cases"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		f.Fatal(err)
	}
	for _, c := range a.Cases {
		f.Add(c.Input)
	}
	p := Lenient()
	f.Fuzz(func(t *testing.T, in string) {
		r := run{p: p, in: in}
		u, err := r.parse(nil)
		if err != nil || len(r.steps) > 0 {
			return
		}
		if href := string(u.appendHref(nil, true)); href != in {
			t.Fatalf("parse(%q) = %q with no step logged", in, href)
		}
	})
}
