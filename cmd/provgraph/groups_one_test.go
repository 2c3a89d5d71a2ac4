package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestGroupsOneGroup: groups --id or --key alone reads that one group
// (service.OneGroup) and prints exactly what the filtered listing prints
// for it (the same flags plus --sort, which lists every group first), in
// JSON and as a table, with its review state; --verdict or --min-size that
// exclude it print an empty page. An unknown key or id exits 1 naming it;
// a --key that is an id, or an --id that is not one, exits 2.
func TestGroupsOneGroup(t *testing.T) {
	db := filepath.Join(t.TempDir(), "one.db")
	if code, _, stderr := cli(t, "ingest", "--db", db, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatal(stderr)
	}
	code, out, stderr := cli(t, "groups", "--db", db, "--format", "json", "--min-size", "1")
	if code != exitOK {
		t.Fatal(stderr)
	}
	var rep struct {
		Groups []struct {
			ID, Key string
			Keys    []string
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) < 3 {
		t.Fatalf("only %d groups", len(rep.Groups))
	}
	// A decision, so that a review state other than unreviewed is shown.
	if code, _, stderr := cli(t, "review", "decide", "--db", db, rep.Groups[0].ID, "same", "--reviewer", "alice"); code != exitOK {
		t.Fatal(stderr)
	}
	same := func(args ...string) string {
		t.Helper()
		base := append([]string{"groups", "--db", db}, args...)
		c1, one, e1 := cli(t, base...)
		c2, listed, e2 := cli(t, append(base, "--sort", "size")...)
		if c1 != exitOK || c2 != exitOK {
			t.Fatalf("groups %v: exit %d, %d: %s %s", args, c1, c2, e1, e2)
		}
		if one != listed {
			t.Errorf("groups %v:\n%s\nthe filtered listing:\n%s", args, one, listed)
		}
		return one
	}
	for _, g := range rep.Groups {
		for _, format := range []string{"json", "table"} {
			if out := same("--id", g.ID, "--format", format); !strings.Contains(out, g.ID) {
				t.Errorf("--id %s --format %s does not show it:\n%s", g.ID, format, out)
			}
			keys := append([]string{g.Key}, g.Keys...)
			for _, k := range keys {
				same("--key", k, "--format", format)
			}
		}
		same("--id", g.ID, "--format", "json", "--verdict", "conflict")
		same("--id", g.ID, "--format", "json", "--min-size", "3", "--review-relations=false")
	}
	if out := same("--id", rep.Groups[0].ID, "--format", "json"); !strings.Contains(out, `"alice"`) {
		t.Errorf("the decided group's review state is not shown:\n%s", out)
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"--key", "https://nowhere.example/"}, exitRejected, `no citation has comparison key "https://nowhere.example/"`},
		{[]string{"--id", "g-000000000000"}, exitRejected, "no group has id g-000000000000"},
		{[]string{"--key", rep.Groups[0].ID}, exitUsage, "use --id"},
		{[]string{"--id", "https://nowhere.example/"}, exitUsage, "a group id is g- and 12 hexadecimal digits"},
	} {
		code, out, stderr := cli(t, append([]string{"groups", "--db", db}, c.args...)...)
		if code != c.code || !strings.Contains(stderr, c.says) || out != "" {
			t.Errorf("groups %v: exit %d, stdout %q, stderr %q; want exit %d saying %q", c.args, code, out, stderr, c.code, c.says)
		}
	}
}
