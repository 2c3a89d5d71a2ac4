package graph

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.etcd.io/bbolt"
)

// The file format is described in FORMAT.md beside this file. In short:
// one bbolt file with a meta bucket naming the format and its version, a
// term dictionary in two buckets, and three indexes of the quads (SPO, POS,
// OSP) made of delta-encoded chunks, POS and OSP as sorted runs. Open refuses a file in any other
// format, naming what it found.
const (
	metaBucket    = "provgraph"
	formatName    = "provgraph-store"
	formatVersion = 7
	// viewlessVersion is the version of a file without derived views: a
	// new file, and a version 3 file opened writable, are marked with it;
	// the first view written (derived.go) marks the file version 7 (6
	// before view rows could carry member records, 5 before views could
	// hold run maps, runmap.go), so that a file without views stays
	// readable by a build of version 4, one whose views are all B-trees by
	// a build of version 5, and one whose views' rows have no member
	// records by a build of version 6.
	viewlessVersion = 4
	// oldestRead is the oldest version this build opens: version 3 is
	// version 4 without run filters (runfilter.go), and a writable Open
	// marks it version 4 before any run with a filter can be written.
	oldestRead = 3

	termsBucket = "terms" // term id (4 bytes) -> encoded term
	idsBucket   = "ids"   // hash of encoded term (8 bytes) -> term ids (4 bytes each)

	// Keys of the meta bucket.
	keyFormat  = "format"
	keyVersion = "version"
	keyNextID  = "next-id" // uint32, big-endian: the id the next new term gets
	keyQuads   = "quads"   // uint64, big-endian: quads stored
)

// v1FormatName is the format of files written by provgraph before the
// compact store: cayley's kv layout. They cannot be read by this build.
const v1FormatName = "provgraph-cayley-kv"

// convertHint says how to bring a file of an earlier version into this
// format.
const convertHint = "to convert it, run `provgraph convert --from OLD.db --db NEW.db`, " +
	"which copies every quad into a new file in this format and leaves the old one unchanged"

// Index orders. Each index holds every quad once, as a tuple of term ids
// in its order with the graph last.
const (
	idxSPO = iota
	idxPOS
	idxOSP
	numIndexes
)

var indexBuckets = [numIndexes]string{idxSPO: "spo", idxPOS: "pos", idxOSP: "osp"}

// ids4 is a quad's term ids in subject, predicate, object, graph order.
type ids4 = [4]uint32

// order permutes a quad's ids into index ind's order.
func order(ind int, q ids4) tuple {
	switch ind {
	case idxPOS:
		return tuple{q[1], q[2], q[0], q[3]}
	case idxOSP:
		return tuple{q[2], q[0], q[1], q[3]}
	}
	return tuple(q)
}

// unorder is the inverse of order.
func unorder(ind int, t tuple) ids4 {
	switch ind {
	case idxPOS:
		return ids4{t[2], t[0], t[1], t[3]}
	case idxOSP:
		return ids4{t[1], t[2], t[0], t[3]}
	}
	return ids4(t)
}

// allBuckets are the top-level buckets of a store.
func allBuckets() []string {
	return append([]string{metaBucket, termsBucket, idsBucket}, indexBuckets[:]...)
}

// inspect reads what the file holds. It returns needInit when the file is
// a bbolt file with no bucket at all (new, or created by an Open that
// stopped before its first commit), an error wrapping ErrNotStore or
// ErrVersion when the file is something else, and one wrapping ErrCorrupt
// when its marker is there but damaged.
func inspect(tx *bbolt.Tx) (needInit bool, err error) {
	if b := tx.Bucket([]byte(metaBucket)); b != nil {
		return false, checkMarker(tx, b)
	}
	var names []string
	ours := 0 // names of the format's buckets
	err = tx.ForEach(func(name []byte, _ *bbolt.Bucket) error {
		names = append(names, strconv.Quote(string(name)))
		if slices.Contains(allBuckets(), string(name)) {
			ours++
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if len(names) == 0 {
		return true, nil
	}
	if len(names) == len(allBuckets())-1 && tx.Bucket([]byte(termsBucket)) != nil && tx.Bucket([]byte(indexBuckets[idxSPO])) != nil {
		return false, fmt.Errorf("%w: found the buckets of a provgraph store but its format marker is missing (damaged file?)", ErrNotStore)
	}
	if tx.Cursor().Bucket().Get([]byte(metaBucket)) != nil || ours >= len(allBuckets())-2 {
		// The marker's name is there as a plain value (the bucket flag of
		// its entry was lost), or most of the buckets are.
		return false, corruptf("the file is damaged: its top-level entries are %s, want the buckets %s", strings.Join(names, ", "), strings.Join(quoteAll(allBuckets()), ", "))
	}
	if meta := tx.Bucket([]byte("meta")); meta != nil && meta.Get([]byte("version")) != nil {
		return false, fmt.Errorf("%w: found a cayley quad store that provgraph did not create (no %q format marker)", ErrNotStore, metaBucket)
	}
	if len(names) > 6 {
		names = append(names[:6], "...")
	}
	return false, fmt.Errorf("%w: found a bbolt database of another program (top-level buckets %s)", ErrNotStore, strings.Join(names, ", "))
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// checkMarker checks the format marker and that every bucket of the format
// is there.
func checkMarker(tx *bbolt.Tx, b *bbolt.Bucket) error {
	name := string(b.Get([]byte(keyFormat)))
	raw := string(b.Get([]byte(keyVersion)))
	if name == v1FormatName {
		return fmt.Errorf("%w: file is in format %s version %s (cayley's kv layout, written by provgraph before the compact store); this build reads %s versions %d to %d; %s",
			ErrVersion, v1FormatName, raw, formatName, oldestRead, formatVersion, convertHint)
	}
	if name != formatName {
		return fmt.Errorf("%w: format marker names %q, want %q", ErrNotStore, name, formatName)
	}
	v, err := strconv.Atoi(raw)
	if err != nil {
		return corruptf("the file is damaged: its format marker names %s with an unreadable version %q", formatName, raw)
	}
	if v == 2 {
		return fmt.Errorf("%w: file is in format %s version 2 (POS and OSP as B-trees, written by provgraph before they became sorted runs); this build reads versions %d to %d; %s",
			ErrVersion, formatName, oldestRead, formatVersion, convertHint)
	}
	if v < oldestRead || v > formatVersion {
		return fmt.Errorf("%w: file is %s version %d, this build reads versions %d to %d", ErrVersion, formatName, v, oldestRead, formatVersion)
	}
	for _, name := range allBuckets() {
		if tx.Bucket([]byte(name)) == nil {
			return corruptf("the file is damaged: its format marker is there but bucket %q is missing", name)
		}
	}
	if v >= 5 && tx.Bucket([]byte(viewBucket)) == nil {
		return corruptf("the file is damaged: its format marker says version %d but bucket %q is missing", v, viewBucket)
	}
	if len(b.Get([]byte(keyNextID))) != 4 || len(b.Get([]byte(keyQuads))) != 8 {
		return corruptf("the file is damaged: its %q bucket lacks the %q or %q counter", metaBucket, keyNextID, keyQuads)
	}
	return nil
}

// initStore creates the buckets and the marker of an empty store, in one
// transaction: a crash leaves either a new empty bbolt file, which the next
// Open initializes, or a complete empty store.
func initStore(db *bbolt.DB) error {
	return db.Update(func(tx *bbolt.Tx) error {
		for _, name := range allBuckets() {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return fmt.Errorf("create bucket %q: %w", name, err)
			}
		}
		m := tx.Bucket([]byte(metaBucket))
		var next [4]byte
		binary.BigEndian.PutUint32(next[:], 1) // 0 means "no term" (the default graph)
		for k, v := range map[string][]byte{
			keyFormat:  []byte(formatName),
			keyVersion: []byte(strconv.Itoa(viewlessVersion)),
			keyNextID:  next[:],
			keyQuads:   make([]byte, 8),
		} {
			if err := m.Put([]byte(k), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// counters are the meta bucket's counters.
type counters struct {
	nextID uint32
	quads  uint64
}

func readCounters(tx *bbolt.Tx) counters {
	m := tx.Bucket([]byte(metaBucket))
	return counters{
		nextID: binary.BigEndian.Uint32(m.Get([]byte(keyNextID))),
		quads:  binary.BigEndian.Uint64(m.Get([]byte(keyQuads))),
	}
}

// minQuadBytes is the least a quad takes in the file: at least 3 bytes (a
// varint each for the first three ids) in each of the three indexes.
const minQuadBytes = 9

// validCounters reads the counters and checks them against the file, for
// readers that size arrays by them: next-id against the last term of the
// dictionary (one seek), and the quad counter against the file's size.
// A damaged counter is an error wrapping ErrCorrupt instead of an
// allocation of gigabytes.
func validCounters(tx *bbolt.Tx) (counters, error) {
	c := readCounters(tx)
	last := uint32(0)
	if k, _ := tx.Bucket([]byte(termsBucket)).Cursor().Last(); k != nil {
		if len(k) != 4 {
			return c, corruptf("the terms bucket ends with key %x, not a 4-byte id", k)
		}
		last = binary.BigEndian.Uint32(k)
	}
	if c.nextID == 0 || last != c.nextID-1 {
		return c, corruptf("the %q counter is %d but the last term of the dictionary has id %d", keyNextID, c.nextID, last)
	}
	if c.quads > uint64(tx.Size())/minQuadBytes {
		return c, corruptf("the %q counter says %d quads, more than a file of %d bytes can hold", keyQuads, c.quads, tx.Size())
	}
	return c, nil
}

func writeCounters(tx *bbolt.Tx, c counters) error {
	m := tx.Bucket([]byte(metaBucket))
	next := make([]byte, 4)
	binary.BigEndian.PutUint32(next, c.nextID)
	quads := make([]byte, 8)
	binary.BigEndian.PutUint64(quads, c.quads)
	if err := m.Put([]byte(keyNextID), next); err != nil {
		return err
	}
	return m.Put([]byte(keyQuads), quads)
}

// upgradeMarker marks a version 3 file as version 4 (viewlessVersion), in the transaction
// of a writable Open: from then on its new runs carry filters, which a
// build that reads only version 3 would take for damage (its check
// decodes every key of a run as a chunk). A version 3 file is a valid
// version 4 file whose runs have no filter, so nothing else changes.
func upgradeMarker(tx *bbolt.Tx) error {
	m := tx.Bucket([]byte(metaBucket))
	if v, _ := strconv.Atoi(string(m.Get([]byte(keyVersion)))); v >= viewlessVersion {
		return nil
	}
	return m.Put([]byte(keyVersion), []byte(strconv.Itoa(viewlessVersion)))
}
