package normalize_test

import (
	"os"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/normalize"
)

// citationFile is a sample of 10,000 synthetic citation-like URLs, the same
// file bench/run.sh times against Node's URL parser.
const citationFile = "testdata/citation_urls_sample10k.txt"

// sink keeps every result observable so the compiler cannot drop the work.
var sink int

// readCitationURLs returns the lines of citationFile, split the way
// bench/gonorm and bench/node_url.js split it.
func readCitationURLs(tb testing.TB) []string {
	tb.Helper()
	data, err := os.ReadFile(citationFile)
	if err != nil {
		tb.Fatal(err)
	}
	s := strings.TrimSuffix(string(data), "\n")
	if s == "" {
		tb.Fatalf("%s: no URLs", citationFile)
	}
	return strings.Split(s, "\n")
}

// benchmarkFile normalizes the lines of citationFile in order, one URL per
// op, wrapping around at the end, so ns/op and allocs/op are per URL. The
// whole sequence runs, step log included; rejections are part of the
// workload.
func benchmarkFile(b *testing.B, p *normalize.Policy) {
	urls := readCitationURLs(b)
	n, err := normalize.New(p, nil)
	if err != nil {
		b.Fatal(err)
	}
	var steps, rejected, keyBytes int
	i := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := n.Normalize(urls[i])
		if err != nil {
			rejected++
		}
		steps += len(res.Steps())
		keyBytes += len(res.Key)
		if i++; i == len(urls) {
			i = 0
		}
	}
	sink += keyBytes
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
	b.ReportMetric(float64(steps)/float64(b.N), "steps/url")
	b.ReportMetric(float64(rejected)/float64(b.N), "rejected/url")
}

// BenchmarkNormalize times the default policy on realistic citation URLs.
func BenchmarkNormalize(b *testing.B) { benchmarkFile(b, normalize.Default()) }

// BenchmarkNormalizeLenient times the lenient policy, whose parse phase is
// exactly the URL Standard's href, on the same URLs.
func BenchmarkNormalizeLenient(b *testing.B) { benchmarkFile(b, normalize.Lenient()) }

// BenchmarkNormalizeURL times single URLs that exercise one part of the
// sequence each, under the default policy.
func BenchmarkNormalizeURL(b *testing.B) {
	n, err := normalize.New(nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name, url string
		wantErr   bool
	}{
		// Already normalized: no step at all.
		{"clean", "https://docs.python.org/3/library/urllib.parse.html", false},
		// Tracking parameters dropped, other parameters kept in order.
		{"tracking", "https://www.nytimes.com/2024/05/01/world/story.html?utm_source=chatgpt.com&id=42&gclid=Cj0K35", false},
		// Uppercase scheme and host, default port, dot segments, percent case,
		// unreserved escape and fragment: one step of each.
		{"many-steps", "HTTPS://News.Example.COM:443/a/./b/../%7euser/r%c3%a9sum%c3%a9?q=caf%C3%A9#sec-2", false},
		// Non-ASCII host through UTS #46 ToASCII and a non-ASCII path.
		{"idn", "https://münchen.de/straße/übersicht?lang=de", false},
		// A rejection: the default policy does not tolerate a space.
		{"rejected", "https://example.com/a path/with spaces", true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if _, err := n.Normalize(bc.url); (err != nil) != bc.wantErr {
				b.Fatalf("Normalize(%q) error = %v, want error %v", bc.url, err, bc.wantErr)
			}
			b.ReportAllocs()
			keyBytes := 0
			for b.Loop() {
				res, _ := n.Normalize(bc.url)
				keyBytes += len(res.Key) + len(res.Steps())
			}
			sink += keyBytes
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "urls/s")
		})
	}
}
