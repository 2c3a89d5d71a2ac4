package query

import (
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
		switch {
		case r.Key != 0:
			f.state = append(f.state, stateKeyed)
		case r.Rejected:
			f.state = append(f.state, stateRejected)
		default:
			f.state = append(f.state, stateUnnormalized)
		}
		keyH = append(keyH, r.Key)
		f.content = append(f.content, r.Key != 0 && r.KeyContent)
		for _, e := range r.Evidence {
			it := evItem{ret: int32(e.Retrieval) - 1, hash: int32(e.Content) - 1, digest: int32(e.Digest) - 1, sim: e.SimHash, hasSim: e.HasSim}
			if it.hash >= 0 {
				f.hashRef = append(f.hashRef, it.hash)
			}
			f.ev = append(f.ev, it)
		}
		redirH = append(redirH, r.Redirects...)
		f.related = append(f.related, r.Related)
		f.hashOff = append(f.hashOff, int32(len(f.hashRef)))
		f.redirOff = append(f.redirOff, int32(len(redirH)))
		f.evOff = append(f.evOff, int32(len(f.ev)))
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
	var pairs []uint64 // handle<<32 | row
	for i, h := range keyH {
		if f.state[i] == stateKeyed {
			pairs = append(pairs, uint64(h)<<32|uint64(i))
		}
	}
	keyH = nil
	slices.Sort(pairs)
	var firsts []uint64 // first row<<32 | its start in pairs, for each key
	for j, p := range pairs {
		if j == 0 || p>>32 != pairs[j-1]>>32 {
			firsts = append(firsts, p<<32|uint64(j))
		}
	}
	slices.Sort(firsts)
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
