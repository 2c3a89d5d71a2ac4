package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/cli")

// TestCLI runs each case in testdata/cli/<name>/: "args" holds the
// command-line arguments as a JSON array, "stdin" (optional) the standard
// input, and "stdout", "stderr" and "exit" the expected results. Run with
// -update to rewrite the expectations, then review the diff.
//
// The engine fingerprint and policy digests depend on the Go release and are
// replaced by placeholders before comparing, so a Go upgrade does not break
// the goldens while every other byte is checked.
func TestCLI(t *testing.T) {
	dirs, err := filepath.Glob("testdata/cli/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no CLI cases in testdata/cli")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var args []string
			if err := json.Unmarshal(mustRead(t, filepath.Join(dir, "args")), &args); err != nil {
				t.Fatalf("%s/args: %v", dir, err)
			}
			// "$TMP" in an argument is a fresh temporary directory, for
			// database files.
			tmp := t.TempDir()
			for i := range args {
				args[i] = strings.ReplaceAll(args[i], "$TMP", tmp)
			}
			var stdin []byte
			if b, err := os.ReadFile(filepath.Join(dir, "stdin")); err == nil {
				stdin = b
			}
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), args, bytes.NewReader(stdin), &stdout, &stderr)
			got := map[string][]byte{
				"stdout": scrub(stdout.Bytes(), tmp),
				"stderr": scrub(stderr.Bytes(), tmp),
				"exit":   []byte(strconv.Itoa(code) + "\n"),
			}
			for _, name := range []string{"stdout", "stderr", "exit"} {
				path := filepath.Join(dir, name)
				if *update {
					if err := os.WriteFile(path, got[name], 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want := mustRead(t, path)
				if !bytes.Equal(got[name], want) {
					t.Errorf("provgraph %s: %s differs from %s\n--- got ---\n%s\n--- want ---\n%s",
						strings.Join(args, " "), name, path, got[name], want)
				}
			}
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var durationRE = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s|m)\b`)

// scrub replaces what depends on the toolchain, the temporary directory
// and the clock with placeholders.
func scrub(b []byte, tmp string) []byte {
	b = []byte(strings.ReplaceAll(string(b), tmp, "$TMP"))
	b = durationRE.ReplaceAll(b, []byte("DURATION"))
	pi := normalize.ParserInfo()
	r := strings.NewReplacer(
		normalize.EngineFingerprint(), "ENGINE",
		normalize.Default().Digest(), "DIGEST(default)",
		normalize.Lenient().Digest(), "DIGEST(lenient)",
		`"go":"`+pi.Go+`"`, `"go":"GO"`,
		"("+pi.Go+",", "(GO,",
	)
	return []byte(r.Replace(string(b)))
}
