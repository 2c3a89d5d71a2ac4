package main

import (
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// modulePrefix is the import path of provgraph's packages.
const modulePrefix = "github.com/provgraph/provgraph/"

// layerPkg is what TestLayers reads of one package directory: its
// non-test imports and whether a file carries its package doc.
type layerPkg struct {
	imports []string
	doc     string
}

// readLayers parses the non-test Go files of every directory of the module
// (bench tools included; files behind "//go:build ignore" are not part of
// the module and are skipped) and returns them by directory, relative to
// the module root.
func readLayers(t *testing.T) map[string]*layerPkg {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*layerPkg{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (name == "testdata" || strings.HasPrefix(name, ".") || name == "node_modules") {
				return filepath.SkipDir
			}
			if path != root {
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module (bench/extractcmp)
				}
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for _, cg := range f.Comments {
			if cg.Pos() >= f.Package {
				break
			}
			for _, c := range cg.List {
				if x, err := constraint.Parse(c.Text); err == nil && !x.Eval(func(tag string) bool { return tag != "ignore" }) {
					return nil
				}
			}
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		p := pkgs[rel]
		if p == nil {
			p = &layerPkg{}
			pkgs[rel] = p
		}
		if f.Doc != nil {
			p.doc += f.Doc.Text()
		}
		for _, im := range f.Imports {
			p.imports = append(p.imports, strings.Trim(im.Path.Value, `"`))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// TestLayers checks the dependency rules the package docs state (issue
// 15): only internal/graph imports bbolt or cayley, bench tools included;
// normalize, graph, capture and extract import no provgraph package;
// resolve does not link the store; nothing imports cmd/provgraph; and
// every internal package and command has a package doc.
func TestLayers(t *testing.T) {
	pkgs := readLayers(t)
	if len(pkgs) < 10 {
		t.Fatalf("read %d package directories, want the whole module", len(pkgs))
	}
	leaves := []string{"internal/normalize", "internal/graph", "internal/capture", "internal/extract", "internal/vocab", "internal/testenv", "internal/cores"}
	forbidden := map[string][]string{
		"internal/model":   {"internal/graph", "internal/ingest", "internal/query", "internal/export", "internal/resolve"},
		"internal/resolve": {"internal/graph", "internal/ingest", "internal/query", "internal/export"},
		"internal/ingest":  {"internal/query", "internal/export", "internal/resolve"},
		"internal/query":   {"internal/ingest", "internal/export", "internal/resolve", "internal/graph", "internal/graph/citestore"},
		"internal/export":  {"internal/ingest", "internal/resolve"},
		"internal/synth":   {"internal/graph", "internal/ingest", "internal/query"},

		// The command opens the database through internal/service;
		// citestore owns the mapping ingest imports.
		"cmd/provgraph":            {"internal/graph", "internal/graph/citestore"},
		"internal/graph/citestore": {"internal/ingest", "internal/query", "internal/export"},
	}
	for dir, p := range pkgs {
		dir = filepath.ToSlash(dir)
		for _, im := range p.imports {
			store := strings.HasPrefix(im, "go.etcd.io/bbolt") || strings.HasPrefix(im, "github.com/cayleygraph/") || strings.HasPrefix(im, "github.com/hidal-go/")
			if store && dir != "internal/graph" {
				t.Errorf("%s imports %s; only internal/graph may import bbolt or cayley", dir, im)
			}
			own, ok := strings.CutPrefix(im, modulePrefix)
			if !ok {
				continue
			}
			if own == "cmd/provgraph" {
				t.Errorf("%s imports cmd/provgraph", dir)
			}
			if slices.Contains(leaves, dir) && !(dir == "internal/vocab" && own == "internal/vocab") {
				t.Errorf("%s imports %s; it must import no provgraph package", dir, own)
			}
			if slices.Contains(forbidden[dir], own) {
				t.Errorf("%s imports %s, which its package doc forbids", dir, own)
			}
		}
		if (strings.HasPrefix(dir, "internal/") || strings.HasPrefix(dir, "cmd/")) && !strings.Contains(dir, "/gen") {
			if !strings.Contains(p.doc, "import") {
				t.Errorf("%s: the package doc does not say what the package may import", dir)
			}
		}
		if p.doc == "" {
			t.Errorf("%s has no package doc", dir)
		}
	}
}
