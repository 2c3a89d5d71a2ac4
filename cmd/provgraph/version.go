package main

import (
	"runtime/debug"

	"github.com/provgraph/provgraph/internal/normalize"
)

// version describes the build: the module version when built from a tagged
// module, else the VCS revision, plus the normalization engine, whose
// fingerprint changes whenever keys can change.
func version() string {
	v := "devel"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		} else {
			for _, s := range bi.Settings {
				if s.Key == "vcs.revision" && len(s.Value) >= 12 {
					v = "devel-" + s.Value[:12]
				}
			}
		}
	}
	return v + " (normalize engine " + normalize.EngineFingerprint() + ")"
}
