package query

import "hash/maphash"

// A valueFilter is a Bloom filter of texts: has is true for every text
// added and, for a text never added, false but for a small share of
// texts (about 1 in 50 with 8 bits per text added, 1 in 1,000 with 16).
// The full listing from a view keeps the content hashes and text
// digests that two keys or more share in one (sharedLister), so that a
// batch looks up in the view only those that may be shared: a text not in
// the filter has one key, the one whose row gave it. Its memory is fixed
// (viewSharedFilterBytes), whatever the size of the database; past
// about a hundred million shared texts it answers true ever more often,
// which costs lookups, never a wrong answer.
type valueFilter struct {
	seed maphash.Seed
	bits []uint64
	mask uint64
}

// viewSharedFilterBytes is the size of the full listing's filter of
// shared texts: 32 MiB, 16 bits a text for 16 million of them.
const viewSharedFilterBytes = 32 << 20

func newValueFilter(bytes int) *valueFilter {
	n := 1
	for n*8 < bytes {
		n *= 2
	}
	return &valueFilter{seed: maphash.MakeSeed(), bits: make([]uint64, n), mask: uint64(n*64 - 1)}
}

// probes is how many bits a text sets.
const probes = 4

func (f *valueFilter) add(s string) {
	h := maphash.String(f.seed, s)
	d := h>>32 | 1
	for i := range uint64(probes) {
		b := (h + i*d) & f.mask
		f.bits[b>>6] |= 1 << (b & 63)
	}
}

func (f *valueFilter) has(s string) bool {
	h := maphash.String(f.seed, s)
	d := h>>32 | 1
	for i := range uint64(probes) {
		b := (h + i*d) & f.mask
		if f.bits[b>>6]&(1<<(b&63)) == 0 {
			return false
		}
	}
	return true
}
