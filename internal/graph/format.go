package graph

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/cayleygraph/cayley/graph"
	ckv "github.com/cayleygraph/cayley/graph/kv"
	"github.com/cayleygraph/quad"
	hkv "github.com/hidal-go/hidalgo/kv"
	"go.etcd.io/bbolt"
)

// The file format.
//
// A store is one bbolt file holding cayley's kv quad store layout (buckets
// "meta", "log", one bucket per index and the value buckets "v.."/"n.."),
// plus a bucket "provgraph" that marks the file as provgraph's and records
// the format version. Format version 1 is cayley's kv layout version 2 with
// the three indexes in storeIndexes. A later layout gets a new version;
// Open refuses versions it does not know instead of misreading them.
const (
	formatBucket  = "provgraph"
	formatName    = "provgraph-cayley-kv"
	formatVersion = 1
)

// Positions of the indexes in storeIndexes, used to pick one for a pattern.
const (
	idxSP = iota
	idxOPS
	idxPS
)

// storeIndexes are the cayley kv indexes of format version 1. The first two
// are cayley's defaults (subject-predicate for forward traversal,
// object-predicate-subject for reverse traversal and exact lookups). The
// third, predicate-subject, is provgraph's: without it a pattern fixing only
// the predicate ("every pg:observedAt") scans every quad. Each key holds the
// IDs of the quads sharing it, and cayley rewrites that list on every
// write, so no index starts with a single low-cardinality direction alone
// (a key per predicate would be rewritten whole with every batch).
//
// The list is fixed here rather than taken from ckv.DefaultQuadIndexes or
// the CAYLEY_KV_INDEXES variable, so that neither a cayley upgrade nor the
// environment can change the layout of a file.
var storeIndexes = []ckv.QuadIndex{
	idxSP:  {Dirs: []quad.Direction{quad.Subject, quad.Predicate}},
	idxOPS: {Dirs: []quad.Direction{quad.Object, quad.Predicate, quad.Subject}},
	idxPS:  {Dirs: []quad.Direction{quad.Predicate, quad.Subject}},
}

// cayley's metadata keys, from graph/kv/indexing.go.
const (
	cayleyMetaBucket = "meta"
	cayleyLogBucket  = "log"
	cayleyIndexesKey = "indexes"
	cayleyVersionKey = "version"
)

// indexBucket is the name of the bucket cayley keeps ind in.
func indexBucket(ind ckv.QuadIndex) string {
	b := make([]byte, len(ind.Dirs))
	for i, d := range ind.Dirs {
		b[i] = d.Prefix()
	}
	return string(b)
}

// isInitBucket reports whether name is a bucket that cayley's kv.Init or
// initStore creates before any quad is written.
func isInitBucket(name []byte) bool {
	switch string(name) {
	case cayleyMetaBucket, cayleyLogBucket:
		return true
	}
	// index buckets are made of direction prefixes (s, p, o, c)
	return len(name) > 0 && len(name) <= 4 && strings.Trim(string(name), "spoc") == ""
}

// inspect reads what the file holds. It returns needInit when the file has
// nothing but what a store's creation writes before its last step (a new
// bbolt file, or a creation that was interrupted), and an error wrapping
// ErrNotStore or ErrVersion when the file is something else.
func inspect(tx *bbolt.Tx) (needInit bool, err error) {
	if b := tx.Bucket([]byte(formatBucket)); b != nil {
		return false, checkMarker(tx, b)
	}
	var names []string
	foreign, used := false, false
	err = tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
		names = append(names, strconv.Quote(string(name)))
		switch {
		case isInitBucket(name):
			if string(name) == cayleyMetaBucket {
				break
			}
			if k, _ := b.Cursor().First(); k != nil {
				used = true
			}
		case len(name) == 3 && (name[0] == 'v' || name[0] == 'n'):
			used = true // cayley's value buckets, written with the first quad
		default:
			foreign = true
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	cayley := false
	if meta := tx.Bucket([]byte(cayleyMetaBucket)); meta != nil {
		cayley = meta.Get([]byte(cayleyVersionKey)) != nil
	}
	switch {
	case !foreign && !used:
		return true, nil
	case cayley:
		return false, fmt.Errorf("%w: found a cayley quad store that provgraph did not create (no %q format marker)", ErrNotStore, formatBucket)
	}
	if len(names) > 6 {
		names = append(names[:6], "...")
	}
	return false, fmt.Errorf("%w: found a bbolt database of another program (top-level buckets %s)", ErrNotStore, strings.Join(names, ", "))
}

// checkMarker checks the format marker and that cayley's layout is the one
// this format version defines.
func checkMarker(tx *bbolt.Tx, b *bbolt.Bucket) error {
	if name := string(b.Get([]byte("format"))); name != formatName {
		return fmt.Errorf("%w: format marker names %q, want %q", ErrNotStore, name, formatName)
	}
	raw := string(b.Get([]byte("version")))
	v, err := strconv.Atoi(raw)
	if err != nil {
		return fmt.Errorf("%w: unreadable format version %q", ErrNotStore, raw)
	}
	if v != formatVersion {
		return fmt.Errorf("%w: file is %s version %d, this build reads version %d", ErrVersion, formatName, v, formatVersion)
	}
	meta := tx.Bucket([]byte(cayleyMetaBucket))
	if meta == nil {
		return fmt.Errorf("%w: format marker present but cayley's %q bucket is missing (damaged file?)", ErrNotStore, cayleyMetaBucket)
	}
	var got []ckv.QuadIndex
	if err := json.Unmarshal(meta.Get([]byte(cayleyIndexesKey)), &got); err != nil {
		return fmt.Errorf("%w: unreadable cayley index list: %v", ErrNotStore, err)
	}
	if !slices.EqualFunc(got, storeIndexes, func(a, b ckv.QuadIndex) bool {
		return a.Unique == b.Unique && slices.Equal(a.Dirs, b.Dirs)
	}) {
		return fmt.Errorf("%w: cayley indexes %v, want %v for version %d", ErrVersion, got, storeIndexes, formatVersion)
	}
	return nil
}

// initStore turns a file for which inspect reported needInit into an empty
// store. cayley's kv.Init runs several transactions, so the format marker is
// written last, in the same transaction as the index list: a crash before it
// leaves a file that inspect again reports as needInit, and the next Open
// starts over.
func initStore(db *bbolt.DB, kvdb hkv.KV) error {
	// Start over from nothing: every bucket here is one of cayley's
	// initial buckets and holds no quad (inspect checked).
	err := db.Update(func(tx *bbolt.Tx) error {
		var names [][]byte
		if err := tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
			names = append(names, slices.Clone(name))
			return nil
		}); err != nil {
			return err
		}
		for _, name := range names {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := ckv.Init(kvdb, graph.Options{}); err != nil {
		return fmt.Errorf("cayley init: %w", err)
	}
	list, err := json.Marshal(storeIndexes)
	if err != nil {
		return err
	}
	return db.Update(func(tx *bbolt.Tx) error {
		meta, err := tx.CreateBucketIfNotExists([]byte(cayleyMetaBucket))
		if err != nil {
			return err
		}
		if meta.Get([]byte(cayleyVersionKey)) == nil {
			return fmt.Errorf("cayley init wrote no %q key", cayleyVersionKey)
		}
		if err := meta.Put([]byte(cayleyIndexesKey), list); err != nil {
			return err
		}
		for _, ind := range storeIndexes {
			if _, err := tx.CreateBucketIfNotExists([]byte(indexBucket(ind))); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucket([]byte(formatBucket))
		if err != nil {
			return err
		}
		if err := b.Put([]byte("format"), []byte(formatName)); err != nil {
			return err
		}
		return b.Put([]byte("version"), []byte(strconv.Itoa(formatVersion)))
	})
}
