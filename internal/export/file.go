package export

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/provgraph/provgraph/internal/graph"
)

// WriteFile writes the export to the file at path atomically: it writes a
// temporary file in the same directory, syncs it to disk and renames it
// over path, so that path holds either its earlier content (or nothing) or
// the complete export, never a partial one, whatever stops the run. The
// file gets mode 0644.
//
// A path that exists and is a device or a named pipe (/dev/null,
// /dev/stdout, a FIFO a reader waits on) is opened and written directly:
// no temporary file can be renamed over it, and there is no earlier
// content to keep. A directory or socket is an error.
func WriteFile(ctx context.Context, st *graph.Store, path string, opts *Options) (Summary, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		if fi.Mode()&(os.ModeDevice|os.ModeCharDevice|os.ModeNamedPipe) == 0 {
			return Summary{}, fmt.Errorf("export: %s exists and is not a regular file, a device or a named pipe", path)
		}
		return writeSpecial(ctx, st, path, opts)
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return Summary{}, fmt.Errorf("export: %w", err)
	}
	tmp := f.Name()
	done := false
	defer func() {
		if !done {
			f.Close()
			os.Remove(tmp)
		}
	}()
	sum, err := Write(ctx, st, f, opts)
	if err != nil {
		return sum, err
	}
	if err := ctx.Err(); err != nil {
		return sum, err
	}
	if err := f.Chmod(0o644); err != nil {
		return sum, fmt.Errorf("export: %w", err)
	}
	if err := f.Sync(); err != nil {
		return sum, fmt.Errorf("export: %w", err)
	}
	if err := f.Close(); err != nil {
		return sum, fmt.Errorf("export: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return sum, fmt.Errorf("export: %w", err)
	}
	done = true
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		serr := d.Sync()
		if cerr := d.Close(); serr == nil {
			serr = cerr
		}
		if serr != nil && !errors.Is(serr, os.ErrInvalid) {
			return sum, fmt.Errorf("export: sync %s: %w", dir, serr)
		}
	}
	return sum, nil
}

// writeSpecial writes the export to an existing device or named pipe.
func writeSpecial(ctx context.Context, st *graph.Store, path string, opts *Options) (Summary, error) {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return Summary{}, fmt.Errorf("export: %w", err)
	}
	sum, err := Write(ctx, st, f, opts)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("export: %w", cerr)
	}
	return sum, err
}
