package normalize_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// mustNotMerge lists the probe categories in which every difference that a
// browser would see is a difference of resource: another normalizer's output
// in these categories must never share provgraph's key with the input unless
// the browser's href is also the same. These are the over-normalizations of
// seeds 000 and 002 (encoded delimiters decoded, paths case-folded, slashes
// collapsed, query reordered, "www." or index files dropped, ...).
var mustNotMerge = map[string]bool{
	"encdelim": true, "slashes": true, "queryorder": true, "queryplus": true,
	"emptyvalue": true, "emptyquery": true, "trailingslash": true, "trailingdot": true,
	"www": true, "pathcase": true, "dirindex": true, "matrix": true, "unicodepath": true,
}

// TestAnchorProbeMerges replays what other normalizers did with 53
// adversarial inputs (testdata/anchor_probe_outputs.json, see its notice in
// testdata/conformance/LICENSE-NOTICE.md) and records, for every output that
// differs from the input, whether provgraph's default policy gives it the
// input's key. The verdicts are pinned in testdata/anchor_merges.golden
// (rewrite with -update after reviewing the diff), and the categories in
// mustNotMerge are checked outright.
func TestAnchorProbeMerges(t *testing.T) {
	data, err := os.ReadFile("testdata/anchor_probe_outputs.json")
	if err != nil {
		t.Fatal(err)
	}
	var probes []map[string]string
	if err := json.Unmarshal(data, &probes); err != nil {
		t.Fatal(err)
	}
	strict := mustNormalizer(t, "default", "")
	lenient := mustNormalizer(t, "lenient", "")
	var lines []string
	for _, p := range probes {
		in, cat := p["input"], p["cat"]
		kin, ein := strict.Normalize(in)
		pin, _ := lenient.Normalize(in)
		tools := make([]string, 0, len(p))
		for tool := range p {
			if tool != "input" && tool != "cat" {
				tools = append(tools, tool)
			}
		}
		sort.Strings(tools)
		for _, tool := range tools {
			out := p[tool]
			if out == in || strings.HasPrefix(out, "ERR:") {
				continue
			}
			kout, eout := strict.Normalize(out)
			verdict := "distinct"
			switch {
			case ein != nil || eout != nil:
				verdict = "rejected"
			case kin.Key == kout.Key:
				verdict = "same-key"
			}
			lines = append(lines, fmt.Sprintf("%s\t%q\t%s\t%q\t%s", cat, in, tool, out, verdict))
			if verdict == "same-key" && mustNotMerge[cat] {
				pout, _ := lenient.Normalize(out)
				if request(pout.Parsed) != request(pin.Parsed) {
					t.Errorf("%s: %s's %q shares key %q with %q, but a browser requests different URLs (%q, %q)",
						cat, tool, out, kin.Key, in, pout.Parsed, pin.Parsed)
				}
			}
		}
	}
	got := []byte("# category\tinput\ttool\ttool output\tprovgraph default policy: same-key, distinct or rejected\n" + strings.Join(lines, "\n") + "\n")
	const golden = "testdata/anchor_merges.golden"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Errorf("%s line %d:\n got  %s\n want %s", golden, i+1, g, w)
			}
		}
	}
}

// request strips the fragment from an href: what a browser sends.
func request(href string) string {
	if i := strings.IndexByte(href, '#'); i >= 0 {
		return href[:i]
	}
	return href
}
