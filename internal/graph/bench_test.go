package graph_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
)

// batchCitations is how many citations make a batch of about 10,000 quads,
// the size ingest writes.
const batchCitations = 455

// BenchmarkAdd adds b.N batches of about 10,000 new quads each (realistic
// citations, MODEL.md) to one store, with and without fsync, and reports
// quads/s and the file's bytes per stored quad. -benchtime=10x stores
// about 100,000 quads.
func BenchmarkAdd(b *testing.B) {
	for _, bc := range []struct {
		name   string
		noSync bool
	}{{"sync", false}, {"nosync", true}} {
		b.Run(bc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "prov.db")
			s, err := graph.Open(path, &graph.Options{NoSync: bc.noSync})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			batches := make([][]graph.Quad, b.N)
			for i := range batches {
				batches[i] = citations(i*batchCitations, (i+1)*batchCitations)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			var added int
			for _, batch := range batches {
				n, err := s.Add(batch)
				if err != nil {
					b.Fatal(err)
				}
				added += n
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(added)/elapsed.Seconds(), "quads/s")
			b.ReportMetric(float64(added)/float64(b.N), "quads/op")
			if err := s.Close(); err != nil {
				b.Fatal(err)
			}
			if fi, err := os.Stat(path); err == nil && added > 0 {
				b.ReportMetric(float64(fi.Size())/float64(added), "disk-bytes/quad")
			}
		})
	}
}
