package ingest_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/synth"
)

// BenchmarkIngest ingests 2,000 synthetic citations into a fresh store per
// iteration (JSON parsing, validation, normalization and storage), and
// reports citations/s, quads/s and quads per citation. bench/ingest.sh
// compares whole runs with cayley's own loader.
func BenchmarkIngest(b *testing.B) {
	const n = 2000
	var buf bytes.Buffer
	if err := synth.New(synth.Options{Seed: 1}).Write(&buf, n); err != nil {
		b.Fatal(err)
	}
	in := filepath.Join(b.TempDir(), "c.jsonl")
	if err := os.WriteFile(in, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	quads := 0
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		st, err := graph.Open(filepath.Join(b.TempDir(), "b.db"), &graph.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		sum, err := ingest.File(context.Background(), st, in, "c.jsonl", ingest.Options{Policy: normalize.Default()})
		if err != nil {
			b.Fatal(err)
		}
		quads += sum.QuadsAdded
		b.StopTimer()
		st.Close()
		b.StartTimer()
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(n*b.N)/secs, "citations/s")
	b.ReportMetric(float64(quads)/secs, "quads/s")
	b.ReportMetric(float64(quads)/float64(n*b.N), "quads/citation")
}

// BenchmarkParseRecord parses and validates 2,000 synthetic lines per
// iteration: the per-line cost of ingest's validation pass without storage.
func BenchmarkParseRecord(b *testing.B) {
	const n = 2000
	var buf bytes.Buffer
	if err := synth.New(synth.Options{Seed: 1}).Write(&buf, n); err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		for i, line := range lines {
			if _, err := ingest.ParseRecord(line, "c.jsonl", i+1); err != nil {
				b.Fatal(err)
			}
		}
	}
}
