package vocab_test

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/provgraph/provgraph/internal/vocab"
)

// TestGeneratedUpToDate runs the generator into a temporary directory and
// compares its output byte for byte with the checked-in vocab.go, so that an
// edit to the .ttl without go generate fails.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the generator")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to run the generator: %v", err)
	}
	out := filepath.Join(t.TempDir(), "vocab.go")
	cmd := exec.Command(goTool, "run", "./gen", "-in", ttlPath, "-out", out)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run ./gen: %v\n%s", err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("vocab.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("vocab.go is stale: run go generate ./internal/vocab")
	}
}

// TestConstantsMatchOntology reads vocab.go's syntax and checks that its pg:
// constants and the .ttl's terms are the same set, each constant named by its
// local name with the first letter upper-cased.
func TestConstantsMatchOntology(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "vocab.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if !ast.IsGenerated(f) {
		t.Error("vocab.go lacks the generated-code header")
	}
	consts := map[string]string{} // local name -> Go name
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			name := vs.Names[0].Name
			if name == "NS" {
				continue
			}
			if vs.Doc == nil || !strings.HasPrefix(vs.Doc.Text(), name+" is pg:") {
				t.Errorf("constant %s has no doc comment starting %q", name, name+" is pg:")
			}
			bin, ok := vs.Values[0].(*ast.BinaryExpr)
			lit, ok2 := bin.Y.(*ast.BasicLit)
			if !ok || !ok2 || bin.X.(*ast.Ident).Name != "NS" {
				t.Errorf("constant %s is not NS + \"name\"", name)
				continue
			}
			l, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatal(err)
			}
			consts[l] = name
		}
	}
	terms := map[string]bool{}
	for _, s := range loadOntology(t).terms {
		l := local(s)
		terms[l] = true
		goName, ok := consts[l]
		if !ok {
			t.Errorf("pg:%s has no constant in vocab.go", l)
			continue
		}
		r, n := utf8.DecodeRuneInString(l)
		if want := string(unicode.ToUpper(r)) + l[n:]; goName != want {
			t.Errorf("pg:%s is the constant %s, want %s", l, goName, want)
		}
	}
	for l, name := range consts {
		if !terms[l] {
			t.Errorf("vocab.go has %s = NS + %q, which the .ttl does not define", name, l)
		}
	}
	if vocab.NS != "https://w3id.org/provgraph/ns#" {
		t.Errorf("NS = %q", vocab.NS)
	}
}
