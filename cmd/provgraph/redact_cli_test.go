package main

import (
	"strings"
	"testing"
)

// credentialLines are citations whose raw URLs, redirect hops, resolved
// URLs, canonical declarations and relations carry credentials: a user and
// password, and a token as the user name.
var credentialLines = []string{
	`{"citation_id":"cred-1","engine":"e","answer_id":"c1","position":1,"observed_at":"2026-11-02T09:15:00Z","raw_url":"https://alice:s3cr3t@example.org/report?utm_source=x#p2","retrieval":{"retrieved_at":"2026-11-02T09:20:00Z","hops":[{"from":"https://alice:s3cr3t@example.org/report?utm_source=x","to":"https://TOKEN123@cdn.example.net/report","status":302}],"final_url":"https://TOKEN123@cdn.example.net/report","final_status":200,"canonical":[{"url":"https://bob:s3cr3t@example.org/canonical","source":"html-link"}]},"relations":[{"type":"mirror_of","target":"https://TOKEN123@mirror.example/report"}]}`,
	`{"citation_id":"cred-2","engine":"e","answer_id":"c2","position":1,"observed_at":"2026-11-02T09:16:00Z","raw_url":"https://alice:s3cr3t@example.org/report"}`,
	`{"citation_id":"cred-3","engine":"e","answer_id":"c3","position":1,"observed_at":"2026-11-02T09:17:00Z","raw_url":"https://TOKEN123@example.org/report"}`,
	`{"citation_id":"cred-4","engine":"e","answer_id":"c4","position":1,"observed_at":"2026-11-02T09:18:00Z","raw_url":"https://example.org/four","retrieval":{"final_url":"https://example.org/four","final_status":200,"canonical":[{"url":"https://bob:s3cr3t@example.org/c","source":"html-link"},{"url":"https://bob:0thers3cr3t@example.org/c","source":"html-link"}]},"relations":[{"type":"mirror_of","target":"https://s3cr3t@mirror.example/four"},{"type":"mirror_of","target":"https://0thers3cr3t@mirror.example/four"}]}`,
}

// TestRedactUserinfoFlag (issue 18, item 16): with --redact-userinfo, no
// command prints the credentials of a URL, in any format; without it the
// evidence is printed exactly; export refuses the flag.
func TestRedactUserinfoFlag(t *testing.T) {
	db := lineageDB(t, t.TempDir(), credentialLines...)
	secrets := []string{"s3cr3t", "TOKEN123"}
	type tc struct {
		args []string
		want string // a redacted form the output must show
	}
	cases := []tc{
		{[]string{"normalize", "https://alice:s3cr3t@example.org/a", "https://TOKEN123@example.org/"}, "alice:***@"},
		{[]string{"normalize", "--format", "json", "https://alice:s3cr3t@example.org/a"}, "alice:***@"},
		{[]string{"normalize", "--policy", "lenient", "https://alice:s3cr3t@example.org/a", "  https://TOKEN123@example.org/\t"}, "https://alice:***@example.org/a"},
		{[]string{"normalize", "--policy", "lenient", "--format", "json", "https://alice:s3cr3t@example.org/a\xff"}, "alice:***@"},
	}
	for _, f := range []string{"text", "json", "dot"} {
		for _, id := range []string{"cred-1", "cred-2", "cred-3"} {
			cases = append(cases, tc{[]string{"lineage", "--db", db, "--format", f, id}, "***@"})
		}
		cases = append(cases, tc{[]string{"lineage", "--db", db, "--format", f, "--url", "https://alice:s3cr3t@example.org/report"}, "alice:***@"})
	}
	// Under the default policy the credentials are rejected: listed apart
	// by table and JSON, not in the CSV of members.
	for _, f := range []string{"table", "json"} {
		cases = append(cases, tc{[]string{"groups", "--db", db, "--min-size", "1", "--format", f}, "alice:***@"})
	}
	cases = append(cases, tc{[]string{"groups", "--db", db, "--min-size", "1", "--format", "csv"}, ""})
	for _, f := range []string{"table", "json"} {
		cases = append(cases, tc{[]string{"stats", "--db", db, "--format", f}, ""})
		for _, e := range []string{"raw-urls", "resolved-urls", "keys", "rejected", "groups"} {
			cases = append(cases, tc{[]string{"stats", "--db", db, "--format", f, "--explain", e}, ""})
		}
	}
	// Under the lenient policy the credentials are in the keys too.
	lenient := []tc{
		{[]string{"renormalize", "--db", db, "--policy", "lenient"}, ""},
		{[]string{"groups", "--db", db, "--min-size", "1"}, "https://alice:***@example.org/report"},
		{[]string{"groups", "--db", db, "--min-size", "1", "--format", "json"}, "https://alice:***@example.org/report"},
		{[]string{"groups", "--db", db, "--min-size", "1", "--format", "csv"}, "https://***@example.org/report"},
		{[]string{"stats", "--db", db, "--explain", "keys"}, "https://alice:***@example.org/report"},
		{[]string{"stats", "--db", db, "--format", "json", "--explain", "keys"}, "https://alice:***@example.org/report"},
		{[]string{"lineage", "--db", db, "cred-1"}, "alice:***@"},
		{[]string{"lineage", "--db", db, "--format", "json", "cred-1"}, "alice:***@"},
		{[]string{"lineage", "--db", db, "--format", "dot", "cred-3"}, "***@"},
		{[]string{"policy-diff", "--db", db, "provgraph-default", "provgraph-lenient"}, ""},
		{[]string{"policy-diff", "--db", db, "--format", "json", "provgraph-default", "provgraph-lenient"}, ""},
	}
	check := func(c tc) {
		t.Helper()
		if c.args[0] == "renormalize" {
			if code, _, stderr := run(t, c.args...); code != 0 {
				t.Fatalf("renormalize: exit %d: %s", code, stderr)
			}
			return
		}
		plain := c.args
		redactedArgs := append(append([]string{}, c.args...), "--redact-userinfo")
		code, out, stderr := run(t, redactedArgs...)
		if code != exitOK && code != exitRejected {
			t.Errorf("provgraph %q: exit %d: %s", redactedArgs, code, stderr)
		}
		for _, s := range secrets {
			if strings.Contains(out+stderr, s) {
				t.Errorf("provgraph %q prints %q:\n%s%s", redactedArgs, s, out, stderr)
			}
		}
		if c.want != "" && !strings.Contains(out, c.want) {
			t.Errorf("provgraph %q does not show %q:\n%s", redactedArgs, c.want, out)
		}
		// Without the flag the evidence is printed exactly.
		_, out, _ = run(t, plain...)
		if c.want != "" && !strings.Contains(out, "s3cr3t") && !strings.Contains(out, "TOKEN123") {
			t.Errorf("provgraph %q hides the credentials without --redact-userinfo:\n%s", plain, out)
		}
	}
	for _, c := range cases {
		check(c)
	}
	for _, c := range lenient {
		check(c)
	}

	// Redaction never merges what differs only in its credentials: the
	// DOT graph of cred-4 has as many nodes redacted as not.
	_, plainDOT, _ := run(t, "lineage", "--db", db, "--format", "dot", "cred-4")
	_, redactedDOT, _ := run(t, "lineage", "--db", db, "--format", "dot", "--redact-userinfo", "cred-4")
	nodes := func(dot string) int { return strings.Count(dot, ", tooltip=") }
	if nodes(plainDOT) != nodes(redactedDOT) || strings.Contains(redactedDOT, "s3cr3t") {
		t.Errorf("lineage --format dot cred-4: %d nodes, %d with --redact-userinfo\n%s", nodes(plainDOT), nodes(redactedDOT), redactedDOT)
	}

	code, out, stderr := run(t, "export", "--db", db, "--redact-userinfo")
	if code != exitUsage || out != "" || !strings.Contains(stderr, "--redact-userinfo") || !strings.Contains(stderr, "evidence") {
		t.Errorf("export --redact-userinfo: exit %d, %d bytes out, %q; want exit %d refusing it", code, len(out), stderr, exitUsage)
	}
	if _, out, _ := run(t, "export", "--db", db); !strings.Contains(out, "alice:s3cr3t@") {
		t.Errorf("export does not write the raw URL exactly")
	}
}
