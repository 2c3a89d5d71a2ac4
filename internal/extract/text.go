package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"math/bits"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"golang.org/x/text/unicode/norm"
)

// NormalizeText is the normal form of a main text, the input of its digest,
// SimHash and passage offsets: invalid UTF-8 replaced by U+FFFD, Unicode NFC,
// every run of white space (Unicode White_Space, including no-break space)
// collapsed to one space, leading and trailing space removed. Case and
// punctuation are kept: the digest is of the text as a reader sees it.
func NormalizeText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = norm.NFC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TextDigest is "sha256:" and the hex SHA-256 of the normalized text. The
// empty text has no digest: it would make every empty page agree.
func TextDigest(normalized string) string {
	if normalized == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(normalized))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// token is a word of a text: a maximal run of letters and digits, lower-cased,
// with its byte span in the text it came from.
type token struct {
	word       string
	start, end int
}

// tokens splits a text into words. Case is folded (simple lower case) so that
// a heading in capitals matches the same words in a sentence.
func tokens(s string) []token {
	var out []token
	start := -1
	for i, r := range s {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			out = append(out, token{strings.ToLower(s[start:i]), start, i})
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, token{strings.ToLower(s[start:]), start, len(s)})
	}
	return out
}

// ShingleSize is the number of consecutive words in each feature of the
// SimHash.
const ShingleSize = 3

// SimHash is Charikar's 64-bit similarity hash of a text's word shingles
// (ShingleSize consecutive words, each hashed with xxHash64, weight 1), as
// Manku, Jain and Das Sarma use it for near-duplicate web pages (WWW 2007).
// Texts that share most shingles have hashes a small Hamming distance
// apart. A text of fewer words than a shingle uses its words; an empty text
// hashes to 0 and reports ok false: it is no evidence.
func SimHash(normalized string) (hash uint64, ok bool) {
	toks := tokens(normalized)
	if len(toks) == 0 {
		return 0, false
	}
	var v [64]int
	add := func(h uint64) {
		for i := range v {
			if h&(1<<uint(i)) != 0 {
				v[i]++
			} else {
				v[i]--
			}
		}
	}
	if len(toks) < ShingleSize {
		for _, t := range toks {
			add(xxhash.Sum64String(t.word))
		}
	} else {
		d := xxhash.New()
		for i := 0; i+ShingleSize <= len(toks); i++ {
			d.Reset()
			for j := i; j < i+ShingleSize; j++ {
				d.WriteString(toks[j].word)
				d.Write([]byte{0})
			}
			add(d.Sum64())
		}
	}
	for i, c := range v {
		if c > 0 {
			hash |= 1 << uint(i)
		}
	}
	return hash, true
}

// Distance is the Hamming distance of two SimHashes: the number of bits in
// which they differ, 0 to 64.
func Distance(a, b uint64) int { return bits.OnesCount64(a ^ b) }

// NearThreshold is the largest SimHash distance at which two main texts are
// called near-identical. Manku et al. found 3 right for 64-bit hashes over 8
// billion pages. On testdata/pages (TestSimHashDistances) equal texts behind
// different boilerplate are 0 apart; rewriting, adding or removing one
// paragraph of a five-paragraph article moves the hash 5 to 13 bits; the
// unrelated fixture pages are 26 to 41 apart. 3 keeps an edited article
// apart from its original, which a reviewer should see as a change, while
// a page that differs by a word or a date line stays near.
const NearThreshold = 3

// NearDuplicate reports whether two SimHashes are within NearThreshold.
func NearDuplicate(a, b uint64) bool { return Distance(a, b) <= NearThreshold }

// HexHash writes a SimHash as 16 lower-case hex digits, the form stored.
func HexHash(h uint64) string {
	const digits = "0123456789abcdef"
	var b [16]byte
	for i := 15; i >= 0; i-- {
		b[i] = digits[h&0xf]
		h >>= 4
	}
	return string(b[:])
}

// wordCount counts the words of a text without building tokens.
func wordCount(s string) int {
	n, in := 0, false
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		s = s[size:]
		w := unicode.IsLetter(r) || unicode.IsDigit(r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}
