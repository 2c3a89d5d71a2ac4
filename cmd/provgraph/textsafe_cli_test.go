package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/render"
)

// hostileLines are citations whose every free field carries what a
// terminal obeys: ESC[2K (erase the line), an OSC 8 hyperlink, CR, a CSI
// as the C1 control U+009B, DEL, and bidirectional overrides and isolates.
var hostileLines = []string{
	`{"citation_id":"esc\u001b[2K-1","engine":"\u001b]8;;https://evil.example/\u001b\\engine\u001b]8;;\u001b\\","answer_id":"ans\u202e-1","position":1,"question":"Real question?\rFAKE LINE \u009b2K \u2066iso\u2069","observed_at":"2026-11-02T09:15:00Z","raw_url":"https://user:secret@example.org/a\u202ecod.exe?utm_source=x","retrieval":{"retrieved_at":"2026-11-02T09:20:00Z","hops":[{"from":"https://user:secret@example.org/a\u202ecod.exe?utm_source=x","to":"https://example.org/b\r\u001b[1A","status":301}],"final_url":"https://example.org/b\r\u001b[1A","final_status":200,"content_hash":"sha256:9f2c1a4b7e3d5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8","content_type":"text/html\u001b[31m","snapshot_ref":"warc://x\u007f","canonical":[{"url":"https://tok@example.org/c\u001b[0m","source":"html-link"}]},"relations":[{"type":"mirror_of","target":"https://mirror.example/\u202ex","format":"amp"}]}`,
	`{"citation_id":"esc\u001b[2K-2","engine":"e\u0085ngine","answer_id":"ans2","position":1,"question":"q","observed_at":"2026-11-02T09:15:00Z","raw_url":"https://user:secret@example.org/a\u001b[2K"}`,
	`{"citation_id":"bidi\u202e-3","engine":"e","answer_id":"ans3","position":1,"question":"q","observed_at":"2026-11-02T09:15:00Z","raw_url":"https://example.org/a\u202ecod.exe","retrieval":{"final_url":"https://example.org/final\u001b[2K","final_status":200,"content_type":"text/html\u009b31m"}}`,
	`{"citation_id":"bidi\u202e-4","engine":"e","answer_id":"ans4","position":1,"question":"q","observed_at":"2026-11-02T09:15:00Z","raw_url":"https://EXAMPLE.org/a\u202ecod.exe#\u001b[2K","retrieval":{"hops":[{"from":"https://EXAMPLE.org/a\u202ecod.exe","to":"https://other.example/\u001b]8;;x\u0007","status":302}],"final_url":"https://other.example/\u001b]8;;x\u0007","final_status":200}}`,
}

// unsafeOutput returns a description of the first byte or rune of out a
// terminal would act on, or "" when there is none: every C0 control but
// the newline, DEL, C1 controls, bidirectional formatting characters and
// invalid UTF-8.
func unsafeOutput(out string) string {
	for i, r := range out {
		if r == '\n' {
			continue
		}
		if r == utf8.RuneError || render.IsUnsafeRune(r) {
			start := max(0, i-40)
			return fmt.Sprintf("%U at byte %d, after %q", r, i, out[start:i])
		}
	}
	return ""
}

// TestTextOutputsEscapeControls (issue 19, item 6) runs every text, table,
// CSV and DOT output over citations whose engine, question, citation id,
// answer id, content type and raw and resolved URLs hold terminal escape
// sequences, carriage returns and bidirectional overrides, and checks that
// no such byte reaches standard output or standard error, and that the
// values are shown escaped.
func TestTextOutputsEscapeControls(t *testing.T) {
	dir := t.TempDir()
	db := lineageDB(t, dir, hostileLines...)
	hostileURL := "https://user:secret@example.org/a\u202ecod.exe?utm_source=x"
	cases := []struct {
		args []string
		want []string // escaped forms that must appear
	}{
		{[]string{"lineage", "esc\x1b[2K-1"}, []string{`citation "esc\x1b[2K-1"`, `engine:       "\x1b]8;;https://evil.example/\x1b\\engine\x1b]8;;\x1b\\"`,
			`question:     "Real question?\rFAKE LINE \u009b2K \u2066iso\u2069"`, `"ans\u202e-1", position 1`, `content type: "text/html\x1b[31m"`,
			`resolved URL: "https://example.org/b\r\x1b[1A"`, `snapshot:     "warc://x\x7f"`, `"https://tok@example.org/c\x1b[0m" (html-link)`,
			`mirror_of "https://mirror.example/\u202ex"`}},
		{[]string{"lineage", "--url", hostileURL}, []string{`raw URL:      "https://user:secret@example.org/a\u202ecod.exe?utm_source=x"`}},
		{[]string{"lineage", "bidi\u202e-4", "--group-scope", "database"}, []string{`citation "bidi\u202e-4"`, `"https://other.example/\x1b]8;;x\a"`}},
		{[]string{"lineage", "--format", "dot", "esc\x1b[2K-1"}, []string{`\\x1b[2K-1`, `\\u202e`}},
		{[]string{"lineage", "--format", "dot", "bidi\u202e-4"}, nil},
		{[]string{"lineage", "--format", "dot", "bidi\u202e-3"}, nil},
		{[]string{"groups", "--min-size", "1"}, []string{`"bidi\u202e-3"  "https://example.org/a\u202ecod.exe"`, `resolved "https://example.org/final\x1b[2K"`,
			`"bidi\u202e-4"  "https://EXAMPLE.org/a\u202ecod.exe#\x1b[2K"  invalid-url-unit`}},
		{[]string{"groups", "--min-size", "1", "--format", "csv"}, []string{`"""bidi\u202e-3"""`}},
		{[]string{"stats"}, nil},
		{[]string{"stats", "--explain", "raw-urls"}, []string{`"https://example.org/a\u202ecod.exe"` + "\n    \"bidi\\u202e-3\""}},
		{[]string{"stats", "--explain", "resolved-urls"}, []string{`"https://example.org/b\r\x1b[1A"`}},
		{[]string{"stats", "--explain", "keys"}, nil},
		{[]string{"stats", "--explain", "groups"}, nil},
		{[]string{"stats", "--explain", "rejected"}, []string{`"esc\x1b[2K-2"`}},
		{[]string{"stats", "--explain", "domain:example.org"}, nil},
		// Under the lenient policy, which accepts the credentials.
		{[]string{"renormalize", "--policy", "lenient"}, nil},
		{[]string{"groups", "--min-size", "1"}, []string{`"esc\x1b[2K-2"  "https://user:secret@example.org/a\x1b[2K"`}},
		{[]string{"stats"}, nil},
		{[]string{"policy-diff", "provgraph-default", "provgraph-lenient"}, nil},
	}
	for _, tc := range cases {
		args := append(tc.args[:1:1], append([]string{"--db", db}, tc.args[1:]...)...)
		code, out, stderr := run(t, args...)
		if code != 0 {
			t.Errorf("provgraph %q: exit %d: %s", args, code, stderr)
		}
		if bad := unsafeOutput(out); bad != "" {
			t.Errorf("provgraph %q: standard output holds %s", args, bad)
		}
		if bad := unsafeOutput(stderr); bad != "" {
			t.Errorf("provgraph %q: standard error holds %s", args, bad)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("provgraph %q: output lacks %s\n%s", args, w, out)
			}
		}
		// The escaped DOT is still DOT that Graphviz reads.
		if _, err := exec.LookPath("dot"); err == nil && strings.HasPrefix(out, "digraph") {
			cmd := exec.Command("dot", "-Tsvg")
			cmd.Stdin = strings.NewReader(out)
			var dotErr bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &dotErr
			if err := cmd.Run(); err != nil || dotErr.Len() > 0 {
				t.Errorf("dot -Tsvg on provgraph %q: %v\n%s", args, err, dotErr.String())
			}
		}
	}

	// A policy file may name itself with control characters; the name is
	// then in the database and in messages.
	_, policyText, _ := run(t, "policy", "show", "default")
	evil := filepath.Join(dir, "evil.toml")
	policyText = strings.Replace(policyText, `name = "provgraph-default"`, `name = "evil\u001b[31m\u202ename"`, 1)
	if err := os.WriteFile(evil, []byte(policyText), 0o644); err != nil {
		t.Fatal(err)
	}
	badLines := filepath.Join(dir, "bad.jsonl")
	bad := `{"citation_id":"b\u001b[2K","observed_at":"2026-11-02T09:15:00Z\u001b[2K","raw_url":"https://example.org/"}` + "\n" +
		`{"citation_id":"c","observed_at":"2026-11-02T09:15:00Z","raw_url":"https://example.org/","relations":[{"type":"mirror_of\u001b[2K","target":"https://x.example/"}]}` + "\n"
	if err := os.WriteFile(badLines, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"policy", "check", evil},
		{"normalize", "--policy", evil, "https://example.org/"},
		{"renormalize", "--db", db, "--policy", evil},
		{"groups", "--db", db, "--policy", "no-such-policy"},
		{"lineage", "--db", db, "no\x1b[2Ksuch"},
		{"ingest", "--db", db, "--skip-invalid", badLines},
	} {
		code, out, stderr := run(t, args...)
		if bad := unsafeOutput(out + stderr); bad != "" {
			t.Errorf("provgraph %q (exit %d): output holds %s\n%s%s", args, code, bad, out, stderr)
		}
		if !strings.Contains(out+stderr, `\x1b`) {
			t.Errorf("provgraph %q (exit %d) does not show ESC escaped:\n%s%s", args, code, out, stderr)
		}
	}

	// normalize reads the URLs from its arguments and from standard input.
	hostile := []string{hostileURL, "https://example.org/\x1b[2K\r", "https://example.org/\u202e", "https://ex\u202eample.org/", "\u009b31mhttps://x.org/", "https://x.org/#\x1b]8;;\a"}
	code, out, stderr := run(t, append([]string{"normalize", "--policy", "lenient"}, hostile...)...)
	var stdout, errOut bytes.Buffer
	code2 := Run(context.Background(), []string{"normalize"}, strings.NewReader(strings.Join(hostile, "\n")+"\n"), &stdout, &errOut)
	for _, r := range []struct {
		code        int
		out, stderr string
	}{{code, out, stderr}, {code2, stdout.String(), errOut.String()}} {
		if r.code != exitOK && r.code != exitRejected {
			t.Errorf("normalize: exit %d: %s", r.code, r.stderr)
		}
		if bad := unsafeOutput(r.out + r.stderr); bad != "" {
			t.Errorf("normalize: output holds %s\n%s", bad, r.out)
		}
	}
	if !strings.Contains(out, `"https://example.org/\x1b[2K\r"`) {
		t.Errorf("normalize does not show the raw URL escaped:\n%s", out)
	}
}
