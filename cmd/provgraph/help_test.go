package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"go.etcd.io/bbolt"

	"github.com/provgraph/provgraph/internal/graph"
)

// errWriter fails every write, as a closed pipe or a full disk would.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, errors.New("write failed") }

// copyFile copies src to a new file dst.
func copyFile(t *testing.T, src, dst string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// cancelWriter keeps what is written and cancels at the first write.
type cancelWriter struct {
	bytes.Buffer
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	defer w.cancel()
	return w.Buffer.Write(p)
}

// helpExitStatuses returns the statuses listed in the "Exit status:" block
// of a help text.
func helpExitStatuses(t *testing.T, help string) []int {
	t.Helper()
	_, block, ok := strings.Cut(help, "\nExit status:\n")
	if !ok {
		t.Fatalf("help has no \"Exit status:\" block:\n%s", help)
	}
	if strings.Contains(block, "\nExit status:\n") {
		t.Fatalf("help has two \"Exit status:\" blocks:\n%s", help)
	}
	var codes []int
	for _, line := range strings.Split(block, "\n") {
		if m := regexp.MustCompile(`^  (\d)  `).FindStringSubmatch(line); m != nil {
			n, _ := strconv.Atoi(m[1])
			codes = append(codes, n)
			continue
		}
		if !strings.HasPrefix(line, "     ") {
			break // the block ends at the first line that is not a status or its continuation
		}
	}
	return codes
}

// TestHelpListsExitStatuses: each command's --help lists exactly the exit
// statuses it returns. Every status listed is produced by running the
// command, and every status produced is listed; a command without cases
// here fails the test.
func TestHelpListsExitStatuses(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	run := func(stdin string, stdout io.Writer, args ...string) (int, string) {
		var stderr bytes.Buffer
		code := Run(context.Background(), args, strings.NewReader(stdin), stdout, &stderr)
		return code, stderr.String()
	}
	good := p("good.db")
	if code, stderr := run("", io.Discard, "ingest", "--db", good, "../../testdata/citations.jsonl"); code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	// A database whose indexes hold a key that is not a run: any read of it
	// meets the damage.
	damaged := copyFile(t, good, p("damaged.db"))
	db, err := bbolt.Open(damaged, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range []string{"ids", "spo", "pos", "osp"} {
			if err := tx.Bucket([]byte(name)).Put([]byte("stray"), []byte("value")); err != nil {
				return err
			}
		}
		return nil
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	// A database cut to half its size: its meta page says more pages.
	truncated := copyFile(t, good, p("truncated.db"))
	if fi, err := os.Stat(truncated); err != nil || os.Truncate(truncated, fi.Size()/2) != nil {
		t.Fatalf("truncating %s: %v", truncated, err)
	}
	// A database another Store holds for the whole test.
	locked := copyFile(t, good, p("locked.db"))
	st, err := graph.Open(locked, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// A format 1 file another process holds, for convert.
	lockedV1 := copyFile(t, "../../internal/graph/testdata/format-v1/prov.db", p("locked-v1.db"))
	v1db, err := bbolt.Open(lockedV1, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer v1db.Close()
	// A database whose only raw URL the default policy rejects: resolve
	// has nothing to fetch.
	nothingToFetch := p("nothing.db")
	if code, stderr := run(`{"raw_url":"http://user:pass@example.test/","observed_at":"2026-01-01T00:00:00Z"}`+"\n", io.Discard,
		"ingest", "--db", nothingToFetch, "-"); code != exitOK {
		t.Fatalf("ingest: exit %d: %s", code, stderr)
	}
	wait := []string{"--lock-timeout", "1ms"}
	withRecords := copyFile(t, good, p("records.db"))
	if code, stderr := run("", io.Discard, "queue", "--build", "--db", withRecords); code != exitOK {
		t.Fatalf("queue --build: exit %d: %s", code, stderr)
	}

	type scenario struct {
		args   []string
		stdin  string
		stdout io.Writer // nil: a buffer
		// stopped cancels the command's context, as Ctrl-C does, once it
		// has written to standard error (a server: that it listens).
		stopped bool
	}
	cases := map[string]map[int]scenario{
		"normalize": {
			exitOK:       {args: []string{"http://example.com/"}},
			exitRejected: {args: []string{"http://user:pass@example.com/"}},
			exitUsage:    {args: []string{"--policy", "no-such-policy.toml", "http://example.com/"}},
			exitFailure:  {args: []string{"http://example.com/"}, stdout: errWriter{}},
		},
		"ingest": {
			exitOK:       {args: []string{"--db", p("new.db"), "../../testdata/citations.jsonl"}},
			exitRejected: {args: []string{"--db", p("new.db"), "-"}, stdin: `{"raw_url":"https://a.test/"}` + "\n"},
			exitUsage:    {args: []string{"--db", p("new.db"), "no-such-file.jsonl"}},
			exitFailure:  {args: []string{"--db", p("no-such-dir/x.db"), "../../testdata/citations.jsonl"}},
			exitLocked:   {args: append([]string{"--db", locked, "../../testdata/citations.jsonl"}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged, "../../testdata/citations.jsonl"}},
		},
		"groups": {
			exitOK:       {args: []string{"--db", good}},
			exitRejected: {args: []string{"--db", good, "--key", "https://nowhere.example/"}},
			exitUsage:    {args: []string{"--db", good, "--policy", "no-such-policy"}},
			exitFailure:  {args: []string{"--db", p("none.db")}},
			exitLocked:   {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged}},
		},
		"stats": {
			exitOK:      {args: []string{"--db", good}},
			exitUsage:   {args: []string{"--db", good, "--explain", "nothing"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"lineage": {
			exitOK:       {args: []string{"--db", good, "gpt-17-2"}},
			exitRejected: {args: []string{"--db", good, "no-such-citation"}},
			exitUsage:    {args: []string{"--db", good}},
			exitFailure:  {args: []string{"--db", p("none.db"), "gpt-17-2"}},
			exitLocked:   {args: append([]string{"--db", locked, "gpt-17-2"}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged, "gpt-17-2"}},
		},
		"renormalize": {
			exitOK:      {args: []string{"--db", copyFile(t, good, p("renormalize.db")), "--policy", "lenient"}},
			exitUsage:   {args: []string{"--db", good}},
			exitFailure: {args: []string{"--db", p("none.db"), "--policy", "lenient"}},
			exitLocked:  {args: append([]string{"--db", locked, "--policy", "lenient"}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged, "--policy", "lenient"}},
		},
		"policy-diff": {
			exitOK:      {args: []string{"--db", good, "provgraph-default", "provgraph-default"}},
			exitUsage:   {args: []string{"--db", good, "provgraph-default", "no-such-policy"}},
			exitFailure: {args: []string{"--db", p("none.db"), "a", "b"}},
			exitLocked:  {args: append([]string{"--db", locked, "a", "b"}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged, "provgraph-default", "provgraph-default"}},
		},
		"policy": {
			exitOK:    {},
			exitUsage: {args: []string{"chek"}},
		},
		"policy show": {
			exitOK:      {args: []string{"lenient"}},
			exitUsage:   {args: []string{"strictest"}},
			exitFailure: {args: []string{"lenient"}, stdout: errWriter{}},
		},
		"policy check": {
			exitOK:      {args: []string{"lenient"}},
			exitUsage:   {args: []string{"testdata/cli/policy-check-typo/policy.toml"}},
			exitFailure: {args: []string{"lenient"}, stdout: errWriter{}},
		},
		"export": {
			exitOK:      {args: []string{"--db", good}},
			exitUsage:   {args: []string{"--db", good, "--format", "xml"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"resolve": {
			exitOK:      {args: []string{"--db", nothingToFetch}},
			exitUsage:   {args: []string{"--db", nothingToFetch, "--concurrency", "0"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"extract": {
			exitOK:      {args: []string{"--db", good}},
			exitUsage:   {args: []string{"--db", good, "extra"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"check": {
			exitOK:      {args: []string{"--db", good}},
			exitUsage:   {args: []string{"--db", good, "extra"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"review list": {
			exitOK:      {args: []string{"--db", good}},
			exitUsage:   {args: []string{"--db", good, "--state", "maybe"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"review show": {
			exitOK:       {args: []string{"--db", good, "g-6e48bcc4a04d"}},
			exitRejected: {args: []string{"--db", good, "g-000000000000"}},
			exitUsage:    {args: []string{"--db", good}},
			exitFailure:  {args: []string{"--db", p("none.db"), "g-6e48bcc4a04d"}},
			exitLocked:   {args: append([]string{"--db", locked, "g-6e48bcc4a04d"}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged, "g-6e48bcc4a04d"}},
		},
		"review decide": {
			exitOK:       {args: []string{"--db", copyFile(t, good, p("decide.db")), "g-6e48bcc4a04d", "same", "--reviewer", "alice"}},
			exitRejected: {args: []string{"--db", good, "g-000000000000", "same", "--reviewer", "alice"}},
			exitUsage:    {args: []string{"--db", good, "g-6e48bcc4a04d", "maybe", "--reviewer", "alice"}},
			exitFailure:  {args: []string{"--db", p("no-such-dir/x.db"), "g-6e48bcc4a04d", "same", "--reviewer", "alice"}},
			exitLocked:   {args: append([]string{"--db", locked, "g-6e48bcc4a04d", "same", "--reviewer", "alice"}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged, "g-6e48bcc4a04d", "same", "--reviewer", "alice"}},
		},
		"serve": {
			exitOK:       {args: []string{"--db", good, "--addr", "127.0.0.1:0", "--read-only"}, stopped: true},
			exitUsage:    {args: []string{"--db", good, "--addr", "0.0.0.0:0"}},
			exitRejected: {args: []string{"--db", good, "--addr", "127.0.0.1:0", "--read-only", "--bounded"}},
			exitFailure:  {args: []string{"--db", p("none.db"), "--read-only", "--addr", "127.0.0.1:0"}},
			exitLocked:   {args: append([]string{"--db", locked, "--addr", "127.0.0.1:0"}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged, "--addr", "127.0.0.1:0"}},
		},
		"query": {
			exitOK:      {args: []string{"--db", good, "g.V().Limit(1).All()"}},
			exitUsage:   {args: []string{"--db", good, "g.V(.All()"}},
			exitFailure: {args: []string{"--db", p("none.db"), "g.V().All()"}},
			exitLocked:  {args: append([]string{"--db", locked, "g.V().All()"}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged, "g.V().Out().All()"}},
		},
		"view": {
			exitOK:    {},
			exitUsage: {args: []string{"rebiuld"}},
		},
		"queue": {
			exitOK:       {args: []string{"--db", withRecords}},
			exitRejected: {args: []string{"--db", good}},
			exitUsage:    {args: []string{"--db", withRecords, "--after", "g-000000000000"}},
			exitFailure:  {args: []string{"--db", p("none.db")}},
			exitLocked:   {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt:  {args: []string{"--db", damaged}},
		},
		"view rebuild": {
			exitOK:      {args: []string{"--db", copyFile(t, good, p("view-rebuild.db"))}},
			exitUsage:   {args: []string{"--db", good, "--policy", "no-such-policy"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"view compact": {
			exitOK:      {args: []string{"--db", copyFile(t, good, p("view-compact.db"))}},
			exitUsage:   {args: []string{"--db", good, "--policy", "no-such-policy"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"view status": {
			exitOK:      {args: []string{"--db", good}},
			exitUsage:   {args: []string{"--db", good, "extra"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", damaged}},
		},
		"compact": {
			exitOK:      {args: []string{"--db", copyFile(t, good, p("compact.db"))}},
			exitUsage:   {args: []string{"--db", good, "--progress", "sometimes"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", copyFile(t, damaged, p("damaged-compact.db"))}},
		},
		"vacuum": {
			exitOK:      {args: []string{"--db", copyFile(t, good, p("vacuum.db"))}},
			exitUsage:   {args: []string{"--db", good, "--progress", "sometimes"}},
			exitFailure: {args: []string{"--db", p("none.db")}},
			exitLocked:  {args: append([]string{"--db", locked}, wait...)},
			exitCorrupt: {args: []string{"--db", truncated}},
		},
		"convert": {
			exitOK:      {args: []string{"--from", "../../internal/graph/testdata/format-v1/prov.db", "--db", p("converted.db")}},
			exitUsage:   {args: []string{"--db", p("converted2.db")}},
			exitFailure: {args: []string{"--from", p("none.db"), "--db", p("converted3.db")}},
			// The earlier-format file is opened with the store's default
			// lock timeout; --lock-timeout is for --db.
			exitLocked:  {args: []string{"--from", lockedV1, "--db", p("converted4.db")}},
			exitCorrupt: {args: []string{"--add-filters", "--db", copyFile(t, damaged, p("damaged-filters.db"))}},
		},
	}

	// Every command that runs has its cases.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Name() == "help" || sub.Name() == "completion" {
				continue
			}
			if sub.Runnable() {
				name := strings.TrimPrefix(sub.CommandPath(), "provgraph ")
				if _, ok := cases[name]; !ok {
					t.Errorf("%s has no cases in TestHelpListsExitStatuses", name)
				}
			}
			walk(sub)
		}
	}
	walk(newRootCommand(strings.NewReader("")))

	for _, name := range slices.Sorted(maps.Keys(cases)) {
		t.Run(strings.ReplaceAll(name, " ", "-"), func(t *testing.T) {
			verb := strings.Fields(name)
			var help bytes.Buffer
			if code, stderr := run("", &help, append(verb, "--help")...); code != exitOK {
				t.Fatalf("%s --help: exit %d: %s", name, code, stderr)
			}
			listed := helpExitStatuses(t, help.String())
			var produced []int
			for code, sc := range cases[name] {
				produced = append(produced, code)
				stdout := sc.stdout
				if stdout == nil {
					stdout = new(bytes.Buffer)
				}
				args := append(slices.Clone(verb), sc.args...)
				var got int
				var stderr string
				if sc.stopped {
					ctx, cancel := context.WithCancel(context.Background())
					buf := &cancelWriter{cancel: cancel}
					got, stderr = Run(ctx, args, strings.NewReader(sc.stdin), stdout, buf), buf.String()
				} else {
					got, stderr = run(sc.stdin, stdout, args...)
				}
				if got != code {
					t.Errorf("provgraph %s: exit %d, want %d\n%s", strings.Join(args, " "), got, code, stderr)
				}
			}
			slices.Sort(produced)
			if !slices.Equal(listed, produced) {
				t.Errorf("provgraph %s --help lists exit statuses %v; the command returns %v\n%s", name, listed, produced, help.String())
			}
		})
	}
}

// TestUsageErrorNamesTheCommandsHelp: a usage error ends with the help
// hint of the command that failed, not the root's.
func TestUsageErrorNamesTheCommandsHelp(t *testing.T) {
	for _, tc := range []struct {
		args []string
		hint string
	}{
		{[]string{"frobnicate"}, "Run 'provgraph --help' for usage."},
		{[]string{"ingest"}, "Run 'provgraph ingest --help' for usage."},
		{[]string{"normalize", "--nope"}, "Run 'provgraph normalize --help' for usage."},
		{[]string{"policy", "check", "a", "b"}, "Run 'provgraph policy check --help' for usage."},
		{[]string{"policy", "show", "strictest"}, "Run 'provgraph policy show --help' for usage."},
		{[]string{"policy", "chek", "default"}, "Run 'provgraph policy --help' for usage."},
		{[]string{"groups", "--format", "xml"}, "Run 'provgraph groups --help' for usage."},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), tc.args, strings.NewReader(""), &stdout, &stderr)
		if code != exitUsage || !strings.HasSuffix(stderr.String(), "\n"+tc.hint+"\n") {
			t.Errorf("provgraph %s: exit %d, stderr %q; want exit %d and stderr ending %q",
				strings.Join(tc.args, " "), code, stderr.String(), exitUsage, tc.hint)
		}
	}
}

// TestPolicyFlagDefaultIsLatestRun: without --policy, groups, stats and
// lineage use the policy of the latest ingest or renormalize run, and their
// --policy help says so.
func TestPolicyFlagDefaultIsLatestRun(t *testing.T) {
	db := filepath.Join(t.TempDir(), "p.db")
	run := func(args ...string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != exitOK {
			t.Fatalf("provgraph %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
		}
		return stdout.String()
	}
	queries := [][]string{
		{"groups", "--db", db},
		{"stats", "--db", db},
		{"lineage", "--db", db, "gpt-17-2"},
	}
	for _, step := range []struct {
		args   []string
		policy string
	}{
		{[]string{"ingest", "--db", db, "../../testdata/citations.jsonl"}, "provgraph-default@"},
		{[]string{"renormalize", "--db", db, "--policy", "lenient"}, "provgraph-lenient@"},
		{[]string{"ingest", "--db", db, "--policy", "default", "../../testdata/citations.jsonl"}, "provgraph-default@"},
	} {
		run(step.args...)
		for _, q := range queries {
			if out := run(q...); !strings.Contains(out, "policy "+step.policy) {
				t.Errorf("after %s, provgraph %s does not use %s:\n%s", strings.Join(step.args[:1], " "), strings.Join(q, " "), step.policy, out)
			}
		}
	}
	root := newRootCommand(strings.NewReader(""))
	for _, name := range []string{"groups", "stats", "lineage"} {
		c, _, err := root.Find([]string{name})
		if err != nil {
			t.Fatal(err)
		}
		if u := c.Flags().Lookup("policy").Usage; !strings.Contains(u, "(default: the policy used by the latest ingest or renormalize run)") {
			t.Errorf("%s --policy help %q does not state the default", name, u)
		}
	}
}
