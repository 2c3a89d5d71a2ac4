package extract

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestHostilePages: pages past the bounds, or damaged, are recorded with a
// problem and whatever could be derived; none panics.
func TestHostilePages(t *testing.T) {
	deep := strings.Repeat("<div>", 200_000) + "deep text" + strings.Repeat("</div>", 200_000)
	wide := "<html><body>" + strings.Repeat("<span>x</span>", MaxElements+1) + "</body></html>"
	huge := "<html><head><title>Huge</title></head><body><p>" + strings.Repeat("word ", MaxBody/5+100) + "</p></body></html>"
	latin1 := []byte("<html><head><title>Caf\xe9</title></head><body><article><p>Le caf\xe9 est ferm\xe9 le lundi.</p></article></body></html>")
	for _, tc := range []struct {
		name        string
		in          Input
		wantProblem string
		wantDigest  bool
	}{
		{"deeply nested", htmlInput([]byte(deep)), "too complex", false},
		{"too many elements", htmlInput([]byte(wide)), "too complex", false},
		{"gigantic", htmlInput([]byte(huge)), "body cut at", false},
		{"truncated by the fetcher", Input{Body: []byte("<p>half a page</p>"), ContentType: "text/html", Status: 200, Truncated: true}, "cut by the fetcher", false},
		{"not the declared charset", Input{Body: latin1, ContentType: "text/html; charset=utf-8", Status: 200}, "not valid in the declared charset utf-8", true},
		{"binary garbage as html", Input{Body: bytes.Repeat([]byte{0, 0xff, '<', 0x80}, 5000), ContentType: "text/html; charset=utf-8", Status: 200}, "not valid in the declared charset", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := Extract(tc.in)
			if !strings.Contains(ev.Problem, tc.wantProblem) {
				t.Errorf("problem %q, want it to contain %q", ev.Problem, tc.wantProblem)
			}
			if (ev.TextDigest != "") != tc.wantDigest {
				t.Errorf("text digest %q, want one: %v", ev.TextDigest, tc.wantDigest)
			}
		})
	}
	// The declared charset is wrong, but a page that says ISO-8859-1 is read
	// as such (windows-1252 by the WHATWG Encoding Standard).
	ev := Extract(Input{Body: latin1, ContentType: "text/html; charset=iso-8859-1", Status: 200})
	if ev.Problem != "" || ev.Title != "Café" {
		t.Errorf("latin-1 page: title %q problem %q", ev.Title, ev.Problem)
	}
}

// TestPlainTextAndOtherTypes: text/plain is its own main text; a PDF or an
// image records its type and nothing else.
func TestPlainTextAndOtherTypes(t *testing.T) {
	ev := Extract(Input{Body: []byte("Line one.\n\nLine  two.\n"), ContentType: "text/plain; charset=utf-8", Status: 200})
	if ev.Method != MethodPlainText || ev.Text != "Line one. Line two." || ev.TextDigest == "" {
		t.Errorf("text/plain: %+v", ev)
	}
	ev = Extract(Input{Body: []byte("%PDF-1.7 ..."), ContentType: "application/pdf", Status: 200})
	if ev.Method != MethodNone || ev.MediaType != "application/pdf" || ev.TextDigest != "" || ev.Confirms() {
		t.Errorf("application/pdf: %+v", ev)
	}
}

// TestVersionMatchesGoMod keeps Version's readability version equal to the
// one go.mod requires, so that an upgrade cannot change evidence unnoticed.
func TestVersionMatchesGoMod(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`codeberg.org/readeck/go-readability/v2 (v\S+)`).FindSubmatch(b)
	if m == nil || string(m[1]) != readabilityVersion {
		t.Errorf("go.mod requires go-readability %s, Version names %s: raise Version", m[1], readabilityVersion)
	}
}

func FuzzExtract(f *testing.F) {
	for _, name := range []string{"news.html", "docs.html", "blog.html"} {
		b, err := os.ReadFile("testdata/pages/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "text/html")
	}
	f.Add([]byte(loginPage), "text/html; charset=windows-1252")
	f.Add([]byte("<table><a><b><a><p><a>"), "")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		ev := Extract(Input{Body: body, ContentType: ct, Status: 200})
		if NormalizeText(ev.Text) != ev.Text {
			t.Errorf("main text not in normal form")
		}
		if ev.TextDigest != "" && ev.TextDigest != TextDigest(ev.Text) {
			t.Errorf("digest is not the text's")
		}
		if ev.Confirms() && ev.Words == 0 {
			t.Errorf("an empty text confirms")
		}
	})
}

func FuzzMatchPassage(f *testing.F) {
	f.Add("the quoted part", "Ünïcödé first — then the “quoted part” here.")
	f.Add("a b a b", "a b a b a b")
	f.Fuzz(func(t *testing.T, passage, text string) {
		text = NormalizeText(text)
		p := MatchPassage(passage, text)
		if p.Start < 0 || p.End > len(text) || p.Start > p.End {
			t.Fatalf("span [%d, %d) outside a text of %d bytes", p.Start, p.End, len(text))
		}
		if p.Score < 0 || p.Score > 1 || (p.Found && p.Score < PassageThreshold) {
			t.Fatalf("score %v found %v", p.Score, p.Found)
		}
		if p.Method == "exact" && !p.Found {
			t.Fatal("exact but not found")
		}
	})
}

// BenchmarkExtract measures extraction alone, per page, on the fixture
// pages (b.N pages, one core).
func BenchmarkExtract(b *testing.B) {
	var pages [][]byte
	for _, p := range loadPages(b) {
		pages = append(pages, readPage(b, p.File))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Extract(htmlInput(pages[i%len(pages)]))
	}
}
