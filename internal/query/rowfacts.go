package query

import (
	"cmp"
	"context"
	"slices"

	"github.com/provgraph/provgraph/internal/store"
)

// rowFields are the fields grouping's facts read of a scan.
const rowFields = store.FieldKey | store.FieldFinalURL | store.FieldRelations | store.FieldEvidence

// rowFacts makes grouping's facts from a backend's scan under the policy
// with the given digest, in domain terms (store.Row). extra are fields
// asked beside grouping's: with store.FieldCitation, fill builds the
// members from the scan's Texts (otherwise it is left nil). Refs are
// handles - 1, so equal refs are equal texts.
func rowFacts(ctx context.Context, sc store.Scanner, policyDigest string, extra store.Fields) (*facts, error) {
	f := &facts{hashOff: []int32{0}, redirOff: []int32{0}, evOff: []int32{0}}
	var keyH, redirH []store.Handle
	texts, err := sc.Scan(ctx, policyDigest, rowFields|extra, func(r *store.Row) error {
		state := stateUnnormalized
		switch {
		case r.Key != 0:
			state = stateKeyed
		case r.Rejected:
			state = stateRejected
		}
		f.state = append(grow(f.state, 1), state)
		keyH = append(grow(keyH, 1), r.Key)
		f.content = append(grow(f.content, 1), r.Key != 0 && r.KeyContent)
		for _, e := range r.Evidence {
			it := evItem{ret: int32(e.Retrieval) - 1, hash: int32(e.Content) - 1, digest: int32(e.Digest) - 1, sim: e.SimHash, hasSim: e.HasSim}
			if it.hash >= 0 {
				f.hashRef = append(grow(f.hashRef, 1), it.hash)
			}
			f.ev = append(grow(f.ev, 1), it)
		}
		redirH = append(grow(redirH, len(r.Redirects)), r.Redirects...)
		f.related = append(grow(f.related, 1), r.Related)
		f.hashOff = append(grow(f.hashOff, 1), int32(len(f.hashRef)))
		f.redirOff = append(grow(f.redirOff, 1), int32(len(redirH)))
		f.evOff = append(grow(f.evOff, 1), int32(len(f.ev)))
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.n = len(f.state)
	f.key = make([]int32, f.n)
	// Key refs are numbered by first appearance in citation id order, as
	// gathered.facts numbers them: the keyed rows sorted by (handle, row)
	// put each key's rows together, its first appearance first. An array
	// indexed by handle was 4 bytes for every term of the database (31 MB
	// at a million citations, with citestore's term ids); this is 8 bytes
	// a keyed citation.
	keyed := 0
	for _, st := range f.state {
		if st == stateKeyed {
			keyed++
		}
	}
	pairs := make([]uint64, 0, keyed) // handle<<32 | row
	for i, h := range keyH {
		if f.state[i] == stateKeyed {
			pairs = append(pairs, uint64(h)<<32|uint64(i))
		}
	}
	keyH = nil
	// Sorted on every core: on one, the sort held the other core idle
	// while nothing else could start.
	sortParallel(pairs, cmp.Compare[uint64])
	var firsts []uint64 // first row<<32 | its start in pairs, for each key
	for j, p := range pairs {
		if j == 0 || p>>32 != pairs[j-1]>>32 {
			firsts = append(firsts, p<<32|uint64(j))
		}
	}
	sortParallel(firsts, cmp.Compare[uint64])
	for ref, fs := range firsts {
		start := int(uint32(fs))
		h := store.Handle(pairs[start] >> 32)
		f.keys = append(f.keys, texts.Text(store.FieldKey, h))
		for j := start; j < len(pairs) && pairs[j]>>32 == uint64(h); j++ {
			f.key[uint32(pairs[j])] = int32(ref)
		}
	}
	f.redirURL = make([]string, len(redirH))
	for j, h := range redirH {
		f.redirURL[j] = texts.Text(store.FieldFinalURL, h)
	}
	f.hashText = func(ref int32) string { return texts.Text(store.FieldContent, store.Handle(ref+1)) }
	f.digestText = func(ref int32) string { return texts.Text(store.FieldEvidence, store.Handle(ref+1)) }
	if extra&store.FieldCitation != 0 {
		f.fill = texts.Citations
	}
	return f, nil
}

// grow returns s with room for n more elements, doubling its capacity when
// it must grow. append grows a large slice by a quarter, so a slice filled
// an element at a time, as rowFacts fills its own from millions of rows,
// was allocated about five times its final size, all garbage but the last
// copy: 1.5 GB at ten million citations, on top of the 2.9 GB the scan
// holds, before the collector ran again.
func grow[T any](s []T, n int) []T {
	if len(s)+n <= cap(s) {
		return s
	}
	return slices.Grow(s, max(len(s)+n, 2*cap(s), 1024)-len(s))
}
