// Command extractcmp compares main-text extractors on provgraph's fixture pages
// (internal/extract/testdata/pages): the share of article sentences each
// keeps, of boilerplate strings each drops, and pages per second on one
// core. It is its own module so that the extractors provgraph does not use
// stay out of provgraph's go.mod.
//
//	cd bench/extractcmp && GOMAXPROCS=1 go run . ../../internal/extract/testdata/pages
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	rdk "codeberg.org/readeck/go-readability/v2"
	shiori "github.com/go-shiori/go-readability"
	trafilatura "github.com/markusmobius/go-trafilatura"
)

type page struct {
	File string   `json:"file"`
	Keep []string `json:"keep"`
	// KnownLoss is article text that provgraph's extractor loses; the
	// comparison counts it as text to keep.
	KnownLoss []string `json:"known_loss"`
	Drop      []string `json:"drop"`
	Title     string   `json:"title"`
	Lang      string   `json:"lang"`
}

func main() {
	dir := os.Args[1]
	var m struct{ Pages []page }
	b, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	json.Unmarshal(b, &m)
	u, _ := url.Parse("https://example.test/x")
	ex := map[string]func([]byte) (string, error){
		"trafilatura": func(h []byte) (string, error) {
			r, err := trafilatura.Extract(bytes.NewReader(h), trafilatura.Options{OriginalURL: u, ExcludeComments: true})
			if err != nil {
				return "", err
			}
			return r.ContentText, nil
		},
		"trafilatura+fallback": func(h []byte) (string, error) {
			r, err := trafilatura.Extract(bytes.NewReader(h), trafilatura.Options{OriginalURL: u, ExcludeComments: true, EnableFallback: true})
			if err != nil {
				return "", err
			}
			return r.ContentText, nil
		},
		"readeck-readability": func(h []byte) (string, error) {
			a, err := rdk.FromReader(bytes.NewReader(h), u)
			if err != nil {
				return "", err
			}
			var sb strings.Builder
			if a.Node == nil {
				return "", nil
			}
			err = a.RenderText(&sb)
			return sb.String(), err
		},
		"shiori-readability": func(h []byte) (string, error) {
			a, err := shiori.FromReader(bytes.NewReader(h), u)
			return a.TextContent, err
		},
	}
	names := []string{}
	for n := range ex {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		f := ex[n]
		kept, keepN, dropped, dropN := 0, 0, 0, 0
		var misses []string
		start := time.Now()
		iters := 0
		for time.Since(start) < 3*time.Second {
			for _, p := range m.Pages {
				h, _ := os.ReadFile(filepath.Join(dir, p.File))
				f(h)
				iters++
			}
		}
		rate := float64(iters) / time.Since(start).Seconds()
		for _, p := range m.Pages {
			h, _ := os.ReadFile(filepath.Join(dir, p.File))
			txt, err := f(h)
			if err != nil {
				misses = append(misses, p.File+": error "+err.Error())
			}
			for _, k := range append(p.Keep, p.KnownLoss...) {
				keepN++
				if strings.Contains(txt, k) {
					kept++
				} else {
					misses = append(misses, p.File+": lost "+k)
				}
			}
			for _, d := range p.Drop {
				dropN++
				if !strings.Contains(txt, d) {
					dropped++
				} else {
					misses = append(misses, p.File+": kept boilerplate "+d)
				}
			}
		}
		fmt.Printf("%-22s keep %d/%d drop %d/%d  %.0f pages/s\n", n, kept, keepN, dropped, dropN, rate)
		for _, s := range misses {
			fmt.Println("    ", s)
		}
	}
}
