package export_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/provgraph/provgraph/internal/export"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/synth"
)

// BenchmarkWrite exports 5,000 synthetic citations in each format to
// io.Discard. bench/export.sh measures whole runs against cayley dump.
func BenchmarkWrite(b *testing.B) {
	st := newStore(b)
	var in bytes.Buffer
	if err := synth.New(synth.Options{Seed: 1}).Write(&in, 5000); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "c.jsonl")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	if _, err := ingest.File(context.Background(), st, path, "c.jsonl", ingest.Options{Policy: normalize.Default()}); err != nil {
		b.Fatal(err)
	}
	for _, format := range export.Formats {
		b.Run(string(format), func(b *testing.B) {
			b.ReportAllocs()
			var quads int64
			for b.Loop() {
				sum, err := export.Write(context.Background(), st, io.Discard, &export.Options{Format: format})
				if err != nil {
					b.Fatal(err)
				}
				quads += sum.Data
			}
			b.ReportMetric(float64(quads)/b.Elapsed().Seconds(), "quads/s")
		})
	}
}
