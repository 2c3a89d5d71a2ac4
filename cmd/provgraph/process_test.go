package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/synth"
	"github.com/provgraph/provgraph/internal/vocab"
)

// TestMain lets the test binary act as the provgraph command, so tests can
// run it as a real process (to kill it, or to hold a lock from another
// process) without building anything.
func TestMain(m *testing.M) {
	if os.Getenv("PROVGRAPH_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// command returns the test binary set up to run "provgraph args...".
func command(args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "PROVGRAPH_AS_MAIN=1")
	return cmd
}

// heldProcess is a provgraph process started with PROVGRAPH_TEST_HOLD.
type heldProcess struct {
	cmd    *exec.Cmd
	stderr io.ReadCloser
	said   bytes.Buffer // standard error up to the hold line, or all of it
}

// startHeld runs "provgraph args..." with PROVGRAPH_TEST_HOLD=hold
// (POINT:N, see testhold.go) and waits, reading its standard error, until
// it says it holds there. It reports false when the process ended first;
// it has then been waited for. A held process waits until kill.
func startHeld(t *testing.T, hold string, args ...string) (*heldProcess, bool) {
	t.Helper()
	p := &heldProcess{cmd: command(args...)}
	p.cmd.Env = append(p.cmd.Env, testHoldEnv+"="+hold)
	var err error
	if p.stderr, err = p.cmd.StderrPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	point, _, _ := strings.Cut(hold, ":")
	sc := bufio.NewScanner(p.stderr)
	for sc.Scan() {
		p.said.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "provgraph: test hold at "+point+" ") {
			return p, true
		}
	}
	io.Copy(&p.said, p.stderr)
	p.cmd.Wait()
	return p, false
}

// kill kills a held process with SIGKILL and waits for it.
func (p *heldProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, p.stderr)
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("held process ended with %v, not killed", err)
	}
}

func synthFile(t *testing.T, n int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "cites.jsonl")
	var b bytes.Buffer
	if err := synth.New(synth.Options{Seed: 7, Sites: 300}).Write(&b, n); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestIngestSurvivesKill kills a real ingest process with SIGKILL once
// three batches of its write pass are committed (it holds there, see
// testhold.go), checks that the database opens, is consistent and shows
// the run as unfinished, then runs the same ingest again and checks the
// result equals an uninterrupted ingest.
func TestIngestSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts several processes; skipped with -short")
	}
	input := synthFile(t, 6000)
	db := filepath.Join(t.TempDir(), "killed.db")
	p, held := startHeld(t, "ingest-batch:3", "ingest", "--db", db, "--batch", "500", input)
	if !held {
		t.Fatalf("ingest ended before its third batch; stderr: %s", p.said.String())
	}
	p.kill(t)

	if out, err := command("check", "--db", db).CombinedOutput(); err != nil || !strings.Contains(string(out), "consistent") {
		t.Errorf("provgraph check after kill -9: %v\n%s", err, out)
	}
	st, err := graph.Open(db, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("database after kill -9 does not open: %v", err)
	}
	runs, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
	if len(runs) != 1 {
		t.Fatalf("%d ingest runs after kill, want 1", len(runs))
	}
	status, _ := st.Objects(runs[0], graph.IRI(vocab.RunStatus))
	if len(status) != 1 || status[0].Value != "running" {
		t.Errorf("killed run status = %v, want only \"running\"", status)
	}
	killed, _ := st.Count()
	st.Close()
	if killed < 3*500 {
		t.Errorf("the killed database holds %d quads; three committed batches of 500 were expected in it", killed)
	}

	out, err := command("ingest", "--db", db, "--batch", "500", input).CombinedOutput()
	if err != nil {
		t.Fatalf("second ingest: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "completing an interrupted run") {
		t.Errorf("second ingest did not say it completed the interrupted run: %s", out)
	}
	clean := filepath.Join(t.TempDir(), "clean.db")
	if out, err := command("ingest", "--db", clean, "--batch", "500", input).CombinedOutput(); err != nil {
		t.Fatalf("clean ingest: %v\n%s", err, out)
	}
	a, b := dumpDB(t, db), dumpDB(t, clean)
	if a != b {
		t.Errorf("killed-and-resumed database (%d quads before resuming) differs from an uninterrupted one", killed)
	}
	// The grouping view too: written in each batch's transaction, the
	// killed run's batches are in it once, and the resumed run writes the
	// rest once.
	va, vb := dumpView(t, db), dumpView(t, clean)
	if !strings.HasPrefix(va, "complete") || va != vb {
		t.Errorf("killed-and-resumed database's grouping view differs from an uninterrupted one's:\n%.2000s\nwant\n%.2000s", va, vb)
	}
}

// dumpView lists every entry of the grouping view of the default policy.
func dumpView(t *testing.T, path string) string {
	t.Helper()
	st, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var lines []string
	err = st.Read(func(r *graph.Reader) (err error) {
		lines, err = citestore.DumpView(r, normalize.Default().Digest())
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// dumpDB lists every quad not about an ingest run, sorted.
func dumpDB(t *testing.T, path string) string {
	t.Helper()
	st, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := map[graph.Term]bool{}
	rs, _ := st.Subjects(graph.IRI(vocab.RDFType), graph.IRI(vocab.IngestRun))
	for _, r := range rs {
		runs[r] = true
	}
	var lines []string
	err = st.Match(context.Background(), graph.Quad{}, func(q graph.Quad) error {
		if !runs[q.S] {
			lines = append(lines, q.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestSecondWriterGetsLockedError: while one process writes (it holds
// after its first batch, see testhold.go, so it is still writing whatever
// the machine's speed), a second writer gets exit status 4 and a clear
// message.
func TestSecondWriterGetsLockedError(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
	input := synthFile(t, 3000)
	db := filepath.Join(t.TempDir(), "busy.db")
	first, held := startHeld(t, "ingest-batch:1", "ingest", "--db", db, "--batch", "200", input)
	if !held {
		t.Fatalf("the first writer ended before its first batch; stderr: %s", first.said.String())
	}
	defer first.kill(t)
	start := time.Now()
	second := command("ingest", "--db", db, "--lock-timeout", "300ms", input)
	out, err := second.CombinedOutput()
	elapsed := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitLocked {
		t.Fatalf("second writer: %v, want exit status %d\n%s", err, exitLocked, out)
	}
	if !strings.Contains(string(out), "locked") {
		t.Errorf("second writer's message does not say the database is locked: %s", out)
	}
	t.Logf("second writer gave up after %v", elapsed.Round(time.Millisecond))
}

// TestCPUProfileEnv: PROVGRAPH_CPUPROFILE=FILE writes a CPU profile of the
// command (pprof's gzip format), and a file that cannot be created is a
// usage error that runs nothing.
func TestCPUProfileEnv(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	cmd := command("policy", "show", "default")
	cmd.Env = append(cmd.Env, "PROVGRAPH_CPUPROFILE="+prof)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("policy show: %v\n%s", err, out)
	}
	b, err := os.ReadFile(prof)
	if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile %s: %d bytes, %v; want a gzip-compressed pprof profile", prof, len(b), err)
	}
	cmd = command("policy", "show", "default")
	cmd.Env = append(cmd.Env, "PROVGRAPH_CPUPROFILE="+filepath.Join(t.TempDir(), "missing", "cpu.prof"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !bytes.Contains(out, []byte("PROVGRAPH_CPUPROFILE")) {
		t.Errorf("unwritable profile: %v, output %q; want exit %d naming PROVGRAPH_CPUPROFILE", err, out, exitUsage)
	}
	if bytes.Contains(out, []byte("provgraph-default")) {
		t.Errorf("the command ran although its profile could not be written: %q", out)
	}
}

// TestTraceEnv: PROVGRAPH_TRACE=FILE writes an execution trace of the
// command (the runtime's format, which opens with "go 1.N trace"), and a
// file that cannot be created is a usage error that runs nothing.
func TestTraceEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.out")
	cmd := command("policy", "show", "default")
	cmd.Env = append(cmd.Env, "PROVGRAPH_TRACE="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("policy show: %v\n%s", err, out)
	}
	b, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(b, []byte("go 1.")) || !bytes.Contains(b[:min(len(b), 16)], []byte(" trace")) {
		t.Fatalf("trace %s: %d bytes, %v; want an execution trace", path, len(b), err)
	}
	cmd = command("policy", "show", "default")
	cmd.Env = append(cmd.Env, "PROVGRAPH_TRACE="+filepath.Join(t.TempDir(), "missing", "trace.out"))
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitUsage || !bytes.Contains(out, []byte("PROVGRAPH_TRACE")) {
		t.Errorf("unwritable trace: %v, output %q; want exit %d naming PROVGRAPH_TRACE", err, out, exitUsage)
	}
	if bytes.Contains(out, []byte("provgraph-default")) {
		t.Errorf("the command ran although its trace could not be written: %q", out)
	}
}

// TestIngestSIGTERMFromStdin sends SIGTERM to an ingest that is spooling a
// standard input whose writer neither writes more nor closes it: the
// command must end with exit status 3 and remove its spool file, as it does
// on Ctrl-C.
func TestIngestSIGTERMFromStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes; skipped with -short")
	}
	tmp := t.TempDir()
	cmd := command("ingest", "--db", filepath.Join(t.TempDir(), "t.db"), "-")
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if _, err := io.WriteString(stdin, `{"citation_id":"c1","engine":"e","observed_at":"2026-11-01T00:00:00Z","raw_url":"https://example.test/"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// The spool file appearing is the event: the command is then reading
	// standard input and will block in that read.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(tmp, "provgraph-ingest-*")); len(m) == 1 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no spool file appeared in TMPDIR; stderr: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailure {
		t.Fatalf("ingest after SIGTERM: %v, want exit status %d; stderr: %s", err, exitFailure, stderr.String())
	}
	if m, _ := filepath.Glob(filepath.Join(tmp, "*")); len(m) != 0 {
		t.Errorf("files left in TMPDIR after SIGTERM: %v", m)
	}
	if strings.Contains(stderr.String(), "context canceled") || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr after SIGTERM: %q", stderr.String())
	}
}
