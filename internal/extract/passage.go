package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// PassageThreshold is the least window score at which an inexact passage is
// called found. On news.html (TestMatchPassage) a passage with changed
// punctuation or dropped words scores 1, one with a word replaced 0.93, a
// paraphrase 0.29 and a sentence the page does not hold 0.25 (its function
// words: "the", "on", "by"). The threshold sits well between the two.
const PassageThreshold = 0.8

// MaxPassageWords bounds the words of a passage that are compared: an
// answer engine's cited passage is a sentence or two.
const MaxPassageWords = 256

// Passage is the result of checking a cited passage against a main text.
type Passage struct {
	// Found reports whether the text supports the passage: exactly, or with
	// a window score of at least PassageThreshold.
	Found bool `json:"found"`
	// Score is 1 for an exact match, else the best window score: the share
	// of the passage's words found in the window of the text, of 1.5 times
	// the passage's length, that holds most of them.
	Score float64 `json:"score"`
	// Method is "exact" (the passage occurs in the text after case folding
	// and the folding of quotes, dashes and white space), "window" (the
	// best window), or "none" (an empty passage or text).
	Method string `json:"method"`
	// Start and End are the byte offsets, in the normalized main text, of
	// the matched span: the exact occurrence, or the best window from its
	// first to its last matched word. Both are 0 when nothing matched.
	Start int `json:"start"`
	End   int `json:"end"`
	// LongestRun is the longest run of consecutive passage words found
	// consecutively in the text.
	LongestRun int `json:"longest_run"`
	// Words is the number of passage words compared.
	Words int `json:"words"`
}

// MatchPassage checks whether a cited passage is supported by a main text
// in normal form (NormalizeText). The exact test folds case, typographic
// quotes and dashes, and white space, because engines retype quotes; the
// window test compares words only, so it survives punctuation changes and
// small omissions but scores a paraphrase low. Time is linear in the text
// plus the matches of the passage's (at most MaxPassageWords) words.
func MatchPassage(passage, normalizedText string) Passage {
	p := foldForMatch(NormalizeText(passage))
	if p.s == "" || normalizedText == "" {
		return Passage{Method: "none"}
	}
	t := foldForMatch(normalizedText)
	ptoks := tokens(p.s)
	if len(ptoks) > MaxPassageWords {
		ptoks = ptoks[:MaxPassageWords]
	}
	if i := strings.Index(t.s, p.s); i >= 0 {
		return Passage{Found: true, Score: 1, Method: "exact",
			Start: t.src[i], End: t.srcEnd(i + len(p.s)),
			LongestRun: len(ptoks), Words: len(ptoks)}
	}
	if len(ptoks) == 0 {
		return Passage{Method: "none"}
	}
	ttoks := tokens(t.s)
	res := Passage{Method: "window", Words: len(ptoks)}

	// Longest common run of words: for each text word, extend the runs that
	// ended at the previous text word and the previous passage word.
	pos := map[string][]int{}
	want := map[string]int{}
	for j, tk := range ptoks {
		pos[tk.word] = append(pos[tk.word], j)
		want[tk.word]++
	}
	prev, cur := map[int]int{}, map[int]int{}
	for _, tk := range ttoks {
		clear(cur)
		for _, j := range pos[tk.word] {
			n := prev[j-1] + 1
			cur[j] = n
			res.LongestRun = max(res.LongestRun, n)
		}
		prev, cur = cur, prev
	}

	// Best window: counts of passage words inside a sliding window of the
	// text, each word counted at most as often as the passage has it.
	w := len(ptoks) + len(ptoks)/2
	have := map[string]int{}
	matched, best, bestEnd := 0, -1, 0
	for i, tk := range ttoks {
		if want[tk.word] > 0 {
			if have[tk.word] < want[tk.word] {
				matched++
			}
			have[tk.word]++
		}
		if i >= w {
			old := ttoks[i-w].word
			if want[old] > 0 {
				have[old]--
				if have[old] < want[old] {
					matched--
				}
			}
		}
		if matched > best {
			best, bestEnd = matched, i
		}
	}
	if best <= 0 {
		return res
	}
	res.Score = float64(best) / float64(len(ptoks))
	res.Found = res.Score >= PassageThreshold
	// The span: the window's first and last words that are passage words.
	lo := max(0, bestEnd-w+1)
	first, last := -1, -1
	for i := lo; i <= bestEnd; i++ {
		if want[ttoks[i].word] > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	res.Start, res.End = t.src[ttoks[first].start], t.srcEnd(ttoks[last].end)
	return res
}

// folded is a text folded for matching, with the byte offset in the
// original text of every byte of the folded one.
type folded struct {
	s   string
	src []int
	n   int // the original text's length
}

// srcEnd maps an end offset of the folded text to the original text.
func (f folded) srcEnd(i int) int {
	if i >= len(f.src) {
		return f.n
	}
	return f.src[i]
}

// foldForMatch lower-cases a text and writes typographic quotes as ' and ",
// dashes as -, and every white space run as one space.
func foldForMatch(s string) folded {
	var b strings.Builder
	src := make([]int, 0, len(s))
	space, spaceAt := false, 0
	for i, r := range s {
		if unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				space, spaceAt = true, i
			}
			continue
		}
		if space {
			b.WriteByte(' ')
			src = append(src, spaceAt)
			space = false
		}
		switch r {
		case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032':
			r = '\''
		case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u00AB', '\u00BB':
			r = '"'
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212':
			r = '-'
		default:
			r = unicode.ToLower(r)
		}
		n := utf8.RuneLen(r)
		if n < 0 {
			r, n = utf8.RuneError, 3
		}
		b.WriteRune(r)
		for k := 0; k < n; k++ {
			src = append(src, i)
		}
	}
	return folded{b.String(), src, len(s)}
}
