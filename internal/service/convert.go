package service

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
)

// ConvertLockTimeout is how long Convert waits for another process to
// release the file it converts; DB.LockTimeout is for the new file.
const ConvertLockTimeout = graph.DefaultLockTimeout

// ErrCurrentFormat is returned by Convert for a file that this build
// opens already: there is nothing to convert (version 3 differs from 4
// only by the run filters, which version 4 adds to it as it writes).
var ErrCurrentFormat = errors.New("already in a format this build reads (provgraph-store version 3, 4 or 5): nothing to convert")

// ConvertSummary counts what Convert copied: quads read from the old file
// and quads added to the new one.
type ConvertSummary struct {
	Read, Added int
}

// Convert copies every quad of the database at from, in a format written by
// an earlier provgraph, unchanged into a new database at d.Path, in
// batches of ingest.DefaultBatchQuads. The old file is checked first (a
// missing, damaged, locked or foreign file is refused, one in the current
// format is ErrCurrentFormat) and only then is the new file made,
// exclusively: one that exists is an error wrapping fs.ErrExist. On any
// later failure, interruption included, the new file is removed.
func (d DB) Convert(ctx context.Context, from string) (sum ConvertSummary, err error) {
	src, err := DB{Path: from, LockTimeout: d.LockTimeout}.Open(true)
	if err == nil {
		src.Close()
		return sum, ErrCurrentFormat
	}
	if !errors.Is(err, graph.ErrVersion) {
		return sum, err
	}
	f, err := os.OpenFile(d.Path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return sum, err
	}
	f.Close()
	st, err := d.Open(false)
	if err != nil {
		os.Remove(d.Path)
		return sum, err
	}
	defer func() {
		if cerr := st.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(d.Path)
		}
	}()
	batch := make([]graph.Quad, 0, ingest.DefaultBatchQuads)
	flush := func() error {
		n, err := st.Add(batch)
		sum.Added += n
		batch = batch[:0]
		return err
	}
	err = graph.ReadEarlier(ctx, from, func(q graph.Quad) error {
		sum.Read++
		if batch = append(batch, q); len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	if err != nil && !IsInterrupt(ctx, err) {
		err = fmt.Errorf("convert %s to %s: %w (the incomplete new file was removed)", from, d.Path, err)
	}
	return sum, err
}
