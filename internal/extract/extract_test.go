package extract

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

type fixturePage struct {
	File      string   `json:"file"`
	Lang      string   `json:"lang"`
	Title     string   `json:"title"`
	Keep      []string `json:"keep"`
	Drop      []string `json:"drop"`
	KnownLoss []string `json:"known_loss"`
}

func loadPages(t testing.TB) []fixturePage {
	t.Helper()
	b, err := os.ReadFile("testdata/pages/manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Pages []fixturePage }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.Pages
}

func readPage(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata/pages", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func htmlInput(body []byte) Input {
	u, _ := url.Parse("https://example.test/page")
	return Input{Body: body, ContentType: "text/html; charset=utf-8", Status: 200, URL: u}
}

// TestMainText checks, on every fixture page, that the main text keeps each
// sentence of the article and drops each piece of boilerplate (navigation,
// asides, newsletter boxes, comments, footers, scripts and styles), and
// that the known losses are still lost (so the manifest is corrected when
// the extractor improves).
func TestMainText(t *testing.T) {
	for _, p := range loadPages(t) {
		t.Run(p.File, func(t *testing.T) {
			ev := Extract(htmlInput(readPage(t, p.File)))
			if ev.Method != MethodReadability {
				t.Errorf("method = %q, want %q", ev.Method, MethodReadability)
			}
			for _, k := range p.Keep {
				if !strings.Contains(ev.Text, k) {
					t.Errorf("main text lost %q", k)
				}
			}
			for _, d := range p.Drop {
				if strings.Contains(ev.Text, d) {
					t.Errorf("main text kept boilerplate %q", d)
				}
			}
			for _, k := range p.KnownLoss {
				if strings.Contains(ev.Text, k) {
					t.Errorf("known loss %q is now kept: move it to keep in the manifest", k)
				}
			}
			if ev.Title != p.Title {
				t.Errorf("title = %q, want %q", ev.Title, p.Title)
			}
			if ev.Language != p.Lang {
				t.Errorf("language = %q, want %q", ev.Language, p.Lang)
			}
			if ev.SoftError != ClassOK || !ev.Confirms() {
				t.Errorf("soft error %q, confirms %v; want an ordinary page", ev.SoftError, ev.Confirms())
			}
			if ev.Version != Version || ev.Problem != "" {
				t.Errorf("version %q problem %q", ev.Version, ev.Problem)
			}
		})
	}
}

// TestDeclaredDates reads the dates of news.html from its meta tags,
// JSON-LD and <time> element.
func TestDeclaredDates(t *testing.T) {
	ev := Extract(htmlInput(readPage(t, "news.html")))
	want := []DeclaredDate{
		{SourceMetaPublished, "2026-10-14T08:30:00Z"},
		{SourceMetaModified, "2026-10-15T11:02:00Z"},
		{SourceJSONLDPublished, "2026-10-14T08:30:00Z"},
		{SourceJSONLDModified, "2026-10-15T11:02:00Z"},
		{SourceTimeElement, "2026-10-14T08:30:00Z"},
	}
	if fmt.Sprint(ev.Dates) != fmt.Sprint(want) {
		t.Errorf("dates = %v, want %v", ev.Dates, want)
	}
	if ev.DatesDisagree {
		t.Error("dates disagree on a page whose dates agree")
	}
	if ev.OGTitle != "Rivers carry more sediment after wildfires" {
		t.Errorf("og:title = %q", ev.OGTitle)
	}
	conflicting := strings.Replace(string(readPage(t, "news.html")), `<time datetime="2026-10-14T08:30:00Z">`, `<time datetime="2025-03-01">`, 1)
	if ev := Extract(htmlInput([]byte(conflicting))); !ev.DatesDisagree {
		t.Errorf("a page that declares publication on 2026-10-14 and 2025-03-01 does not disagree: %v", ev.Dates)
	}
}

// volatile rewrites the parts of news.html that change on every fetch of a
// real page: a render timestamp, a CSRF token, the trending box.
func volatile(page string, n int) string {
	page = strings.Replace(page, "<body>", fmt.Sprintf(`<body data-rendered="2026-12-01T10:00:%02dZ"><input type="hidden" name="csrf" value="tok%08x">`, n, n*7919), 1)
	return strings.Replace(page, "Celebrity chef opens floating restaurant", fmt.Sprintf("Trending story number %d of the hour", n), 1)
}

// TestVolatileBytesSameText: two fetches of a page whose bytes differ but
// whose article does not have the same text digest and SimHash.
func TestVolatileBytesSameText(t *testing.T) {
	base := string(readPage(t, "news.html"))
	a, b := Extract(htmlInput([]byte(volatile(base, 1)))), Extract(htmlInput([]byte(volatile(base, 2))))
	if volatile(base, 1) == volatile(base, 2) {
		t.Fatal("the two fetches have the same bytes")
	}
	if a.TextDigest == "" || a.TextDigest != b.TextDigest {
		t.Errorf("text digests %q and %q differ", a.TextDigest, b.TextDigest)
	}
	if Distance(a.SimHash, b.SimHash) != 0 {
		t.Errorf("SimHash distance %d, want 0", Distance(a.SimHash, b.SimHash))
	}
}

// edits are changes of one article's text, as a page edited between two
// fetches would show, with the SimHash distance each must keep from the
// original: more than NearThreshold for a changed sentence.
var edits = []struct {
	name     string
	old, new string
}{
	{"one sentence rewritten", "Water utilities downstream of burned areas have reported clogged intakes and higher treatment costs, and several have begun to build settling basins ahead of the rainy season.",
		"A spokesperson for the regional water board declined to comment on the findings when reached by telephone on Wednesday afternoon."},
	{"a paragraph added", "<p>The team says land managers", "<p>A correction was appended: an earlier version of this article misstated the number of watersheds in the study, which was forty, not fourteen as first reported.</p><p>The team says land managers"},
	{"a paragraph removed", `<p>"The first big storm after a fire is the one that matters," said Dr. Lena Varga, a hydrologist who led the work. "It moves more material in a day than the river normally moves in a year."</p>`, ""},
}

// TestSimHashDistances measures the distances behind NearThreshold: an
// edited article is farther than the threshold from its original, and
// unrelated fixture pages are far apart.
func TestSimHashDistances(t *testing.T) {
	base := string(readPage(t, "news.html"))
	orig := Extract(htmlInput([]byte(base)))
	for _, e := range edits {
		if !strings.Contains(base, e.old) {
			t.Fatalf("%s: the fixture does not hold the text to change", e.name)
		}
		ed := Extract(htmlInput([]byte(strings.Replace(base, e.old, e.new, 1))))
		d := Distance(orig.SimHash, ed.SimHash)
		t.Logf("%s: distance %d", e.name, d)
		if d <= NearThreshold {
			t.Errorf("%s: distance %d, within the threshold %d", e.name, d, NearThreshold)
		}
		if ed.TextDigest == orig.TextDigest {
			t.Errorf("%s: same text digest", e.name)
		}
	}
	pages := loadPages(t)
	for i := range pages {
		for j := i + 1; j < len(pages); j++ {
			a := Extract(htmlInput(readPage(t, pages[i].File)))
			b := Extract(htmlInput(readPage(t, pages[j].File)))
			d := Distance(a.SimHash, b.SimHash)
			t.Logf("%s vs %s: distance %d", pages[i].File, pages[j].File, d)
			if d <= 2*NearThreshold {
				t.Errorf("%s vs %s: distance %d", pages[i].File, pages[j].File, d)
			}
		}
	}
}

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"  a \t b\n\nc  ", "a b c"},
		{"Cafe\u0301", "Café"},       // NFC
		{"a\u00a0b\u2003c", "a b c"}, // no-break and em spaces are white space
		{"A\xffB", "A\uFFFDB"},       // invalid UTF-8
		{"Case Kept", "Case Kept"},   // case is kept
		{"", ""},
	} {
		if got := NormalizeText(tc.in); got != tc.want {
			t.Errorf("NormalizeText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if TextDigest("") != "" {
		t.Error("the empty text has a digest")
	}
	if !regexp.MustCompile(`^sha256:[0-9a-f]{64}$`).MatchString(TextDigest("a")) {
		t.Errorf("TextDigest(a) = %q", TextDigest("a"))
	}
}
