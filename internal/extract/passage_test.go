package extract

import (
	"strings"
	"testing"
)

// TestMatchPassage checks passages present, retyped, shortened, paraphrased
// and absent against the main text of news.html, and that the reported span
// holds the passage.
func TestMatchPassage(t *testing.T) {
	text := Extract(htmlInput(readPage(t, "news.html"))).Text
	for _, tc := range []struct {
		name      string
		passage   string
		found     bool
		method    string
		minScore  float64
		maxScore  float64
		spanHolds string
	}{
		{"verbatim", "Rivers that drain burned hillsides carry up to six times more sediment in the first winter after a wildfire",
			true, "exact", 1, 1, "Rivers that drain burned hillsides"},
		{"retyped quotes and case", "“THE FIRST BIG STORM after a fire is the one that matters,” said Dr. Lena Varga",
			true, "exact", 1, 1, "The first big storm"},
		{"a word dropped, punctuation changed", "Water utilities downstream of burned areas reported clogged intakes and higher treatment costs; several have begun to build settling basins",
			true, "window", 1, 1, "Water utilities"},
		{"a word replaced", "Water utilities downstream of burned areas have reported blocked intakes and higher treatment costs",
			true, "window", PassageThreshold, 0.99, "Water utilities"},
		{"paraphrased", "After a fire, streams flowing from scorched slopes transport as much as sixfold the usual silt during the following wet season",
			false, "window", 0, 0.6, ""},
		{"absent", "The central bank raised interest rates by a quarter point on Thursday",
			false, "window", 0, 0.3, ""},
		{"empty", "", false, "none", 0, 0, ""},
	} {
		got := MatchPassage(tc.passage, text)
		t.Logf("%s: %+v", tc.name, got)
		if got.Found != tc.found || got.Method != tc.method || got.Score < tc.minScore || got.Score > tc.maxScore {
			t.Errorf("%s: found %v method %q score %.2f; want found %v method %q score in [%.2f, %.2f]",
				tc.name, got.Found, got.Method, got.Score, tc.found, tc.method, tc.minScore, tc.maxScore)
		}
		if got.Start < 0 || got.End > len(text) || got.Start > got.End {
			t.Errorf("%s: span [%d, %d) outside the text of %d bytes", tc.name, got.Start, got.End, len(text))
			continue
		}
		if tc.spanHolds != "" && !strings.Contains(strings.ToLower(text[got.Start:got.End]), strings.ToLower(tc.spanHolds)) {
			t.Errorf("%s: span %q does not hold %q", tc.name, text[got.Start:got.End], tc.spanHolds)
		}
	}
}

// TestMatchPassageExactSpan: the exact span is the passage's own bytes in
// the text, with multi-byte characters before it.
func TestMatchPassageExactSpan(t *testing.T) {
	text := NormalizeText("Ünïcödé first — then the “quoted part” here.")
	got := MatchPassage(`the "quoted part"`, text)
	if !got.Found || text[got.Start:got.End] != "the “quoted part”" {
		t.Errorf("span %q (%+v)", text[got.Start:got.End], got)
	}
}
