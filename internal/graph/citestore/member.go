package citestore

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/store"
)

// Member records (FORMAT.md "Views", version 7). A grouping view marked
// viewMembers keeps, at the end of each row, the citation as a listed
// review group shows it (store.Listed): a full listing from the view then
// reads rows in key order and no citation, where a point read of each
// member's citation cost about 65 µs of CPU (seven times the scan's cost
// per citation). The record is written wherever the row is, from the
// same citation, so it is as current as the row; check compares it as
// part of the row.
//
// A record is, after the row's evidence, the byte 1 then:
//
//	str(raw URL)
//	0, or 1 and str(fragment)
//	0, or 1 and the normalization: str(compare) str(host rule)
//	      strs(rules) strs(removed parameters) str(error code) str(error message)
//	uvarint(n) then n retrievals, in the citation's order:
//	      str(final URL) str(final status) text(content hash) str(outcome)
//	      uvarint(hops) then a byte per hop (1: it crossed hosts)
//	      uvarint(n) then n × (str(URL) str(source))    canonical declarations
//	      0, or 1 and the current extraction: str(extractor) text(text digest)
//	      str(SimHash) str(soft error)
//	uvarint(n) then n relations: str(type) str(target) str(format)
//	      str(captured at) str(evidence)
//	0, or 1 and the passage check shown: uvarint(retrieval index) found (1 byte)
//	      score (float64 bits, 8 bytes big-endian) str(method) str(extractor)
//	      0, or 1 and uvarint(span start) uvarint(span end)
//
// strs(l) is uvarint(len(l)) then each str. The key, citation id and
// policy are the row's.

// viewMembers is the key of a view bucket whose rows carry member
// records (value "1"); absent in views made by builds before version 7,
// whose rows end after their evidence.
const viewMembers = "members"

// appendMember appends the record of m (store.Listed of a citation).
func appendMember(b []byte, m *store.Citation) []byte {
	b = append(b, 1)
	b = appendStr(b, m.Raw)
	b = appendOpt(b, m.Fragment)
	if n := m.Norm; n != nil {
		b = append(b, 1)
		b = appendStr(b, n.Compare)
		b = appendStr(b, n.HostRule)
		b = appendStrs(b, n.Rules)
		b = appendStrs(b, n.RemovedParams)
		b = appendStr(b, n.ErrorCode)
		b = appendStr(b, n.ErrorMessage)
	} else {
		b = append(b, 0)
	}
	var passageOf = -1
	b = binary.AppendUvarint(b, uint64(len(m.Retrievals)))
	for i, r := range m.Retrievals {
		b = appendStr(b, r.FinalURL)
		b = appendStr(b, string(r.FinalStatus))
		b = appendText(b, r.ContentHash)
		b = appendStr(b, r.Outcome)
		b = binary.AppendUvarint(b, uint64(len(r.Hops)))
		for _, h := range r.Hops {
			b = append(b, boolByte(h.CrossesHost))
		}
		b = binary.AppendUvarint(b, uint64(len(r.Canonicals)))
		for _, c := range r.Canonicals {
			b = appendStr(b, c.URL)
			b = appendStr(b, c.Source)
		}
		x := r.Current()
		if x == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = appendStr(b, x.Extractor)
		b = appendText(b, x.TextDigest)
		b = appendStr(b, x.SimHash)
		b = appendStr(b, x.SoftError)
		if len(m.Passages) > 0 && m.Passages[0].Against == x {
			passageOf = i
		}
	}
	b = binary.AppendUvarint(b, uint64(len(m.Relations)))
	for _, r := range m.Relations {
		for _, s := range []string{r.Type, r.Target, r.Format, r.CapturedAt, r.Evidence} {
			b = appendStr(b, s)
		}
	}
	if passageOf < 0 {
		return append(b, 0)
	}
	p := m.Passages[0]
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(passageOf))
	b = append(b, boolByte(p.Found))
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(p.Score))
	b = appendStr(b, p.Method)
	b = appendStr(b, p.Extractor)
	if p.Span == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.AppendUvarint(b, uint64(p.Span.Start))
	return binary.AppendUvarint(b, uint64(p.Span.End))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendOpt(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	return appendStr(append(b, 1), *s)
}

func appendStrs(b []byte, l []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = appendStr(b, s)
	}
	return b
}

// memberReader decodes a record: each read fails once the record is
// short or malformed, and err says how.
type memberReader struct {
	v   []byte
	err error
}

func (d *memberReader) fail(what string) {
	if d.err == nil {
		d.err = errors.New(what)
	}
	d.v = nil
}

func (d *memberReader) byte() byte {
	if len(d.v) == 0 {
		d.fail("the member record runs past the end of the row")
		return 0
	}
	c := d.v[0]
	d.v = d.v[1:]
	return c
}

// flag reads a byte that must be 0 or 1.
func (d *memberReader) flag() bool {
	switch d.byte() {
	case 0:
		return false
	case 1:
		return true
	}
	d.fail("the member record has a flag other than 0 or 1")
	return false
}

func (d *memberReader) uvarint() uint64 {
	n, k := binary.Uvarint(d.v)
	if k <= 0 {
		d.fail("a number of the member record is unreadable")
		return 0
	}
	d.v = d.v[k:]
	return n
}

// count reads a count of items, each at least one byte.
func (d *memberReader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.v)) {
		d.fail("a count of the member record exceeds the row")
		return 0
	}
	return int(n)
}

func (d *memberReader) str() string {
	if d.err != nil {
		return ""
	}
	s, rest, err := readStr(d.v)
	if err != nil {
		d.fail(err.Error())
		return ""
	}
	d.v = rest
	return s
}

func (d *memberReader) text() string {
	if d.err != nil {
		return ""
	}
	s, rest, err := readText(d.v)
	if err != nil {
		d.fail(err.Error())
		return ""
	}
	d.v = rest
	return s
}

func (d *memberReader) strs() []string {
	n := d.count()
	var out []string
	for range n {
		out = append(out, d.str())
	}
	return out
}

// decodeMember reads the record in v (after its leading 1) of the row
// with the given key and citation id, under policy pol, and returns the
// bytes after it.
func decodeMember(v []byte, id, key string, pol *store.PolicyRef) (*store.Citation, []byte, error) {
	d := &memberReader{v: v}
	m := &store.Citation{ID: id, Raw: d.str()}
	if d.flag() {
		f := d.str()
		m.Fragment = &f
	}
	if d.flag() {
		m.Norm = &store.Normalization{Policy: pol, Key: key, Compare: d.str(), HostRule: d.str(), Rules: d.strs(),
			RemovedParams: d.strs(), ErrorCode: d.str(), ErrorMessage: d.str()}
	}
	for range d.count() {
		r := &store.Retrieval{FinalURL: d.str(), FinalStatus: store.Integer(d.str()), ContentHash: d.text(), Outcome: d.str()}
		for i := range d.count() {
			r.Hops = append(r.Hops, store.Hop{Index: i, CrossesHost: d.flag()})
		}
		for range d.count() {
			r.Canonicals = append(r.Canonicals, model.Canonical{URL: d.str(), Source: d.str()})
		}
		if d.flag() {
			r.Extractions = []*store.Extraction{{Extractor: d.str(), TextDigest: d.text(), SimHash: d.str(), SoftError: d.str()}}
		}
		m.Retrievals = append(m.Retrievals, r)
	}
	for range d.count() {
		r := &store.Relation{}
		r.Type, r.Target, r.Format, r.CapturedAt, r.Evidence = d.str(), d.str(), d.str(), d.str(), d.str()
		m.Relations = append(m.Relations, r)
	}
	if d.flag() {
		i := d.uvarint()
		p := &store.Passage{Found: d.flag()}
		var score [8]byte
		for j := range score {
			score[j] = d.byte()
		}
		p.Score = math.Float64frombits(binary.BigEndian.Uint64(score[:]))
		p.Method, p.Extractor = d.str(), d.str()
		if d.flag() {
			p.Span = &store.Span{Start: int(d.uvarint()), End: int(d.uvarint())}
		}
		if d.err == nil {
			if i >= uint64(len(m.Retrievals)) || m.Retrievals[i].Current() == nil {
				d.fail("the member record's passage check is against a retrieval without an extraction")
			} else {
				p.Against = m.Retrievals[i].Current()
				m.Passages = []*store.Passage{p}
			}
		}
	}
	if d.err != nil {
		return nil, nil, d.err
	}
	return m, d.v, nil
}

// hasMembers reports whether the rows of view bucket b carry member
// records.
func hasMembers(b *graph.Bucket) bool { return string(b.Get([]byte(viewMembers))) == "1" }
