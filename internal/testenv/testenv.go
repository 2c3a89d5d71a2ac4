// Package testenv decides what a test does when an outside program it checks
// against (Graphviz, Raptor, Serd, the Python RDF libraries, Oxigraph) is not
// installed. It is imported by tests only.
//
// On a developer's machine such a test skips, naming the package to install.
// In CI, which installs every one of them, a missing program means the
// install failed, and a skip there would let a run report success with the
// interoperability checks unrun: .ci/run sets PROVGRAPH_REQUIRE_TOOLS=1 and
// the same call fails the test instead.
//
// testenv imports no provgraph package, and no package but tests may import
// it.
package testenv

import (
	"os"
	"testing"
)

// RequireToolsEnv is the environment variable that turns a missing tool into
// a test failure.
const RequireToolsEnv = "PROVGRAPH_REQUIRE_TOOLS"

// MissingTool skips the test with the reason, or fails it when
// PROVGRAPH_REQUIRE_TOOLS is set to 1.
func MissingTool(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(RequireToolsEnv) == "1" {
		t.Fatalf("%s (%s=1: every tool is required)", reason, RequireToolsEnv)
	}
	t.Skip(reason)
}
