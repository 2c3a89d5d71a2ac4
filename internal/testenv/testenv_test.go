package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// TestMissingTool runs MissingTool in a child test process, once without and
// once with PROVGRAPH_REQUIRE_TOOLS=1, and checks that the first skips and
// the second fails.
func TestMissingTool(t *testing.T) {
	if os.Getenv("TESTENV_CHILD") == "1" {
		MissingTool(t, "frobnicator is not installed")
		return
	}
	for _, tc := range []struct {
		require  string
		wantFail bool
	}{{"", false}, {"1", true}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMissingTool$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTENV_CHILD=1", RequireToolsEnv+"="+tc.require)
		out, err := cmd.CombinedOutput()
		if failed := err != nil; failed != tc.wantFail {
			t.Errorf("%s=%q: failed = %v, want %v\n%s", RequireToolsEnv, tc.require, failed, tc.wantFail, out)
		}
		if !tc.wantFail && !containsSkip(out) {
			t.Errorf("%s=%q: the child test did not skip:\n%s", RequireToolsEnv, tc.require, out)
		}
	}
}

func containsSkip(out []byte) bool {
	for i := 0; i+8 <= len(out); i++ {
		if string(out[i:i+8]) == "--- SKIP" {
			return true
		}
	}
	return false
}
