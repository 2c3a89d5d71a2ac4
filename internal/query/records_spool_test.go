package query

import (
	"bufio"
	"bytes"
	"io"
	"reflect"
	"testing"
)

// TestSpooledRoundTrip: a record spooled is read back as it was, but for
// Queued (not spooled); records follow one another; a spool cut inside a
// record is io.ErrUnexpectedEOF, at a record's end io.EOF.
func TestSpooledRoundTrip(t *testing.T) {
	recs := []*GroupRecord{
		{ID: "g-1", Key: "https://a.example/", Keys: []string{"https://a.example/"}, Members: 1, Verdict: "normalized-compare"},
		{ID: "g-2", Key: "", Keys: []string{}, Members: 300, Verdict: "conflict", ReviewRelation: true},
		{ID: "g-3", Key: "k\x00\xff日本", Keys: []string{"a", "b", string(make([]byte, 300))}, Members: 1 << 20, ReviewRelation: true},
	}
	var b []byte
	var ends []int
	for _, r := range recs {
		b = appendSpooled(b, r)
		ends = append(ends, len(b))
	}
	br := bufio.NewReader(bytes.NewReader(b))
	for i, want := range recs {
		got, err := readSpooled(br)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("record %d: %+v, %v; want %+v", i, got, err, want)
		}
	}
	if _, err := readSpooled(br); err != io.EOF {
		t.Fatalf("after the last record: %v, want io.EOF", err)
	}
	for cut := 1; cut < len(b); cut++ {
		br := bufio.NewReader(bytes.NewReader(b[:cut]))
		var err error
		for err == nil {
			_, err = readSpooled(br)
		}
		atEnd := false
		for _, e := range ends {
			atEnd = atEnd || e == cut
		}
		if atEnd && err != io.EOF || !atEnd && err != io.ErrUnexpectedEOF {
			t.Fatalf("spool cut at byte %d of %d: %v", cut, len(b), err)
		}
	}
}
