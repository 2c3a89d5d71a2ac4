package graph_test

import (
	"bufio"
	"context"
	"errors"
	cgraph "github.com/cayleygraph/cayley/graph"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	"github.com/cayleygraph/quad"
	hbolt "github.com/hidal-go/hidalgo/kv/bbolt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.etcd.io/bbolt"

	"github.com/provgraph/provgraph/internal/graph"
)

func TestOpenCreatesOneFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "prov.db")
	s := mustOpen(t, path, nil)
	if got := mustCount(t, s); got != 0 {
		t.Errorf("Count() of a new store = %d, want 0", got)
	}
	mustAdd(t, s, citation(1)...)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.Mode().IsRegular() {
		t.Errorf("%s is %v, want a regular file", path, fi.Mode())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"prov.db"}) {
		t.Errorf("directory holds %q, want only the database file", names)
	}
}

func TestReopenKeepsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	quads := citations(0, 20)
	s := mustOpen(t, path, nil)
	mustAdd(t, s, quads...)
	want := all(t, s, graph.Quad{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = mustOpen(t, path, nil)
	if got := all(t, s, graph.Quad{}); !slices.Equal(got, want) {
		t.Errorf("after reopening, Match(all) = %d quads, want %d", len(got), len(want))
	}
	if n := mustAdd(t, s, quads...); n != 0 {
		t.Errorf("Add(same quads) after reopening = %d, want 0", n)
	}
	if got := mustCount(t, s); got != int64(distinct(quads)) {
		t.Errorf("Count() = %d, want %d", got, distinct(quads))
	}
}

func TestOpenReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	w := mustOpen(t, path, nil)
	mustAdd(t, w, citation(7)...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	r1 := mustOpen(t, path, &graph.Options{ReadOnly: true})
	r2 := mustOpen(t, path, &graph.Options{ReadOnly: true}) // readers share the file
	for _, r := range []*graph.Store{r1, r2} {
		if got := mustCount(t, r); got != int64(len(citation(7))) {
			t.Errorf("read-only Count() = %d, want %d", got, len(citation(7)))
		}
	}
	_, err := r1.Add(citation(8))
	if !errors.Is(err, graph.ErrReadOnly) {
		t.Errorf("read-only Add() error = %v, want ErrReadOnly", err)
	}
}

func TestOpenReadOnlyMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "missing.db")
	_, err := graph.Open(path, &graph.Options{ReadOnly: true})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
		t.Errorf("Open(missing, ReadOnly) error = %v, want fs.ErrNotExist naming %s", err, path)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read-only Open created %s", path)
	}
}

func TestLocked(t *testing.T) {
	const timeout = 100 * time.Millisecond
	tests := []struct {
		name          string
		first, second graph.Options
	}{
		{"writer then writer", graph.Options{}, graph.Options{LockTimeout: timeout}},
		{"writer then reader", graph.Options{}, graph.Options{LockTimeout: timeout, ReadOnly: true}},
		{"reader then writer", graph.Options{ReadOnly: true}, graph.Options{LockTimeout: timeout}},
		{"no wait", graph.Options{}, graph.Options{LockTimeout: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prov.db")
			s := mustOpen(t, path, nil) // create it
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			mustOpen(t, path, &tt.first)
			start := time.Now()
			s2, err := graph.Open(path, &tt.second)
			waited := time.Since(start)
			if err == nil {
				s2.Close()
				t.Fatalf("second Open succeeded, want ErrLocked")
			}
			var gerr *graph.Error
			if !errors.Is(err, graph.ErrLocked) || !errors.As(err, &gerr) || gerr.Path != path {
				t.Errorf("second Open error = %v, want *Error for %s wrapping ErrLocked", err, path)
			}
			// Only a loose bound: the point is that Open returns at all.
			if waited > 10*time.Second {
				t.Errorf("second Open took %v with LockTimeout %v", waited, tt.second.LockTimeout)
			}
			t.Logf("ErrLocked after %v", waited)
		})
	}
}

// TestHelperProcess is not a test: TestLockedOtherProcess runs the test
// binary again with GRAPH_HELPER set, and this function is then a second
// process that opens the store. Mode "hold" opens it for writing, prints
// "ready" and holds it until stdin closes; mode "open" tries to open it
// and prints "locked", "opened" or the error.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("GRAPH_HELPER")
	if mode == "" {
		t.Skip("helper process for TestLockedOtherProcess")
	}
	path := os.Getenv("GRAPH_HELPER_PATH")
	switch mode {
	case "hold":
		s, err := graph.Open(path, nil)
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("ready\n")
		io.Copy(io.Discard, os.Stdin)
		s.Close()
	case "open":
		s, err := graph.Open(path, &graph.Options{LockTimeout: 100 * time.Millisecond})
		switch {
		case errors.Is(err, graph.ErrLocked):
			os.Stdout.WriteString("locked\n")
		case err != nil:
			os.Stdout.WriteString("error: " + err.Error() + "\n")
		default:
			s.Close()
			os.Stdout.WriteString("opened\n")
		}
	}
	os.Exit(0)
}

func helper(t *testing.T, mode, path string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "GRAPH_HELPER="+mode, "GRAPH_HELPER_PATH="+path)
	return cmd
}

func TestLockedOtherProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	path := filepath.Join(t.TempDir(), "prov.db")
	s := mustOpen(t, path, nil)
	mustAdd(t, s, citation(1)...)

	// This process holds the file: the other one is refused.
	out, err := helper(t, "open", path).Output()
	if err != nil || string(out) != "locked\n" {
		t.Errorf("other process opening a held store: %q, %v; want \"locked\"", out, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The other process holds the file: this one is refused, then let in.
	cmd := helper(t, "hold", path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		t.Fatalf("helper said %q, %v; want \"ready\"", line, err)
	}
	start := time.Now()
	_, err = graph.Open(path, &graph.Options{LockTimeout: 100 * time.Millisecond})
	if !errors.Is(err, graph.ErrLocked) {
		t.Errorf("Open of a store another process holds: %v, want ErrLocked", err)
	}
	t.Logf("ErrLocked after %v", time.Since(start))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	mustOpen(t, path, nil) // released with the process
}

func TestOpenNotStore(t *testing.T) {
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		opts    graph.Options
		wantErr error
		want    string // in the message
	}{
		{
			name: "text file",
			make: func(t *testing.T, path string) {
				writeFile(t, path, strings.Repeat("not a database\n", 1000))
			},
			wantErr: graph.ErrNotStore, want: "not a bbolt database",
		},
		{
			name:    "short text file",
			make:    func(t *testing.T, path string) { writeFile(t, path, "hello\n") },
			wantErr: graph.ErrNotStore, want: "not a bbolt database",
		},
		{
			name: "directory",
			make: func(t *testing.T, path string) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: graph.ErrNotStore, want: "directory",
		},
		{
			name:    "empty file, read-only",
			make:    func(t *testing.T, path string) { writeFile(t, path, "") },
			opts:    graph.Options{ReadOnly: true},
			wantErr: graph.ErrNotStore, want: "empty file",
		},
		{
			name: "bbolt file of another program",
			make: func(t *testing.T, path string) {
				boltUpdate(t, path, func(tx *bbolt.Tx) error {
					b, err := tx.CreateBucket([]byte("widgets"))
					if err != nil {
						return err
					}
					return b.Put([]byte("k"), []byte("v"))
				})
			},
			wantErr: graph.ErrNotStore, want: `another program (top-level buckets "widgets")`,
		},
		{
			name: "cayley store without the provgraph marker",
			make: func(t *testing.T, path string) {
				writeCayleyStore(t, path)
			},
			wantErr: graph.ErrNotStore, want: "cayley quad store that provgraph did not create",
		},
		{
			name: "provgraph store without its marker",
			make: func(t *testing.T, path string) {
				s := mustOpenPlain(t, path)
				mustAdd(t, s, citation(1)...)
				s.Close()
				boltUpdate(t, path, func(tx *bbolt.Tx) error { return tx.DeleteBucket([]byte("provgraph")) })
			},
			wantErr: graph.ErrNotStore, want: "format marker is missing",
		},
		{
			name: "newer format version",
			make: func(t *testing.T, path string) {
				s := mustOpenPlain(t, path)
				s.Close()
				boltUpdate(t, path, func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte("provgraph")).Put([]byte("version"), []byte("99"))
				})
			},
			wantErr: graph.ErrVersion, want: "version 99, this build reads versions 3 to 7",
		},
		{
			name: "other format name",
			make: func(t *testing.T, path string) {
				s := mustOpenPlain(t, path)
				s.Close()
				boltUpdate(t, path, func(tx *bbolt.Tx) error {
					return tx.Bucket([]byte("provgraph")).Put([]byte("format"), []byte("provgraph-sqlite"))
				})
			},
			wantErr: graph.ErrNotStore, want: `format marker names "provgraph-sqlite"`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "prov.db")
			tt.make(t, path)
			s, err := graph.Open(path, &tt.opts)
			if err == nil {
				s.Close()
				t.Fatalf("Open(%s) succeeded, want %v", tt.name, tt.wantErr)
			}
			msg := err.Error()
			if !errors.Is(err, tt.wantErr) || !strings.Contains(msg, path) || !strings.Contains(msg, tt.want) {
				t.Errorf("Open(%s) error = %q, want %v naming the file and saying %q", tt.name, msg, tt.wantErr, tt.want)
			}
		})
	}
}

// TestOpenInterruptedCreate checks that a file left by a creation that
// stopped before its first commit (a bbolt file without any bucket) is
// initialized instead of being refused for ever.
func TestOpenInterruptedCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "prov.db")
	boltUpdate(t, path, func(tx *bbolt.Tx) error { return nil })
	s := mustOpen(t, path, nil)
	if n := mustAdd(t, s, citation(3)...); n != len(citation(3)) {
		t.Errorf("Add() = %d, want %d", n, len(citation(3)))
	}
}

// writeCayleyStore writes a database with cayley's own kv quad store on
// bbolt, as `cayley load --db bbolt` would.
func writeCayleyStore(t *testing.T, path string) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	kv := hbolt.New(db)
	defer kv.Close()
	if err := ckv.Init(kv, nil); err != nil {
		t.Fatal(err)
	}
	qs, err := ckv.New(kv, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = qs.ApplyDeltas([]cgraph.Delta{{Action: cgraph.Add, Quad: quad.MakeIRI("https://example.com/s", "https://example.com/p", "https://example.com/o", "")}}, cgraph.IgnoreOpts{})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClosed(t *testing.T) {
	s := newStore(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v, want nil", err)
	}
	_, err := s.Add(citation(1))
	if !errors.Is(err, graph.ErrClosed) {
		t.Errorf("Add after Close: %v, want ErrClosed", err)
	}
	if _, err := s.Count(); !errors.Is(err, graph.ErrClosed) {
		t.Errorf("Count after Close: %v, want ErrClosed", err)
	}
	err = s.Match(context.Background(), graph.Quad{}, func(graph.Quad) error { return nil })
	if !errors.Is(err, graph.ErrClosed) {
		t.Errorf("Match after Close: %v, want ErrClosed", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// boltUpdate edits a bbolt file directly, to make files Open must refuse.
func boltUpdate(t *testing.T, path string, fn func(*bbolt.Tx) error) {
	t.Helper()
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// mustOpenPlain opens a store without the Check at cleanup, for tests
// that damage it.
func mustOpenPlain(t *testing.T, path string) *graph.Store {
	t.Helper()
	s, err := graph.Open(path, &graph.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
