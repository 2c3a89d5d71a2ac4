package graph

import (
	"cmp"
	"slices"
	"unsafe"
)

// A span is a byte range [from, to) of the file's mapping, as offsets
// from its start.
type span struct{ from, to int64 }

// gaps returns the page-aligned ranges of [0, size) that no span of keep
// touches: the pages a release spares are every page a kept span has a
// byte in. keep must be sorted by from.
func gaps(keep []span, size, page int64) []span {
	var out []span
	at := int64(0)
	for _, k := range keep {
		lo := k.from / page * page
		hi := min((k.to+page-1)/page*page, size)
		if lo > at {
			out = append(out, span{at, min(lo, size)})
		}
		at = max(at, hi)
		if at >= size {
			break
		}
	}
	if at < size {
		out = append(out, span{at, size})
	}
	return out
}

// pinnedFilters returns the spans of the mapping that hold the filters of
// the POS and OSP runs the Reader has loaded, as many whole filters as
// fit in budget bytes, sorted: what LimitMapped spares.
//
// Why: a lookup in POS or OSP probes the filter of every run of the
// index, one random 64-byte block each (runfilter.go), so that a pass of
// lookups over the whole file (the check of a view reads every citation)
// touches every page of every filter again and again: 546 MB of filters
// at ten million citations. A release that drops them makes the next
// lookups fault them back in, one 37 µs fault a page: at ten million
// citations a view check keeping 512 MiB mapped went through no citation
// in 150 s after the checks of its maps, where unlimited it read 1.4
// million. Sparing them keeps what every lookup reads mapped, and lets
// go of the SPO leaves, terms and chunks read once.
func (r *Reader) pinnedFilters(budget int64) []span {
	if budget <= 0 || r.s.db == nil {
		return nil
	}
	info := r.s.db.Info()
	if info == nil || info.Data == 0 {
		return nil
	}
	base := info.Data
	end := base + uintptr(r.tx.Size())
	var out []span
	var used int64
	for _, ind := range []int{idxPOS, idxOSP} {
		x := r.runs.idx[ind]
		if x == nil {
			continue
		}
		for _, run := range x.runs {
			f := run.filter
			if len(f) == 0 {
				continue
			}
			p := uintptr(unsafe.Pointer(unsafe.SliceData(f)))
			if p < base || p+uintptr(len(f)) > end {
				continue // not in the mapping (a test's filter in memory)
			}
			if used+int64(len(f)) > budget {
				continue
			}
			used += int64(len(f))
			out = append(out, span{int64(p - base), int64(p-base) + int64(len(f))})
		}
	}
	slices.SortFunc(out, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	return out
}
