package render

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/provgraph/provgraph/internal/query"
)

// TestJSONListMatchesValue: a list written a value at a time is byte for
// byte the slice encoding/json writes under the same prefix, empty, of
// one value and of several, for the rejected citations and the ids of a
// groups report.
func TestJSONListMatchesValue(t *testing.T) {
	rejected := []query.RejectedURL{
		{CitationID: "a-1", RawURL: "https://user:pw@example.com/x?<y>", Code: "bad-scheme", Message: "a \"quoted\" message"},
		{CitationID: "a-2", RawURL: "mailto:x", Code: "not-http", Message: "not http(s)"},
		{CitationID: "a-3", RawURL: "", Code: "empty", Message: ""},
	}
	ids := []string{"c-1", "c\x1b2", "c-3"}
	for n := 0; n <= 3; n++ {
		for _, tc := range []struct {
			name string
			all  any
			list func(each func(any) error) error
		}{
			{"rejected", rejected[:n], func(each func(any) error) error {
				for _, r := range rejected[:n] {
					if err := each(r); err != nil {
						return err
					}
				}
				return nil
			}},
			{"ids", ids[:n], func(each func(any) error) error {
				for _, id := range ids[:n] {
					if err := each(id); err != nil {
						return err
					}
				}
				return nil
			}},
		} {
			var buf bytes.Buffer
			bw := bufio.NewWriter(&buf)
			if err := jsonList(bw, tc.list); err != nil {
				t.Fatal(err)
			}
			bw.Flush()
			if want := jsonValue(tc.all, "  "); !bytes.Equal(buf.Bytes(), want) {
				t.Errorf("%s, %d values: jsonList wrote\n%s\nwant\n%s", tc.name, n, buf.Bytes(), want)
			}
		}
	}
}
