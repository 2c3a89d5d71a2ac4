package citestore_test

import (
	"reflect"
	"testing"

	"github.com/provgraph/provgraph/internal/graph/citestore"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
)

func TestDetectRelations(t *testing.T) {
	n, err := normalize.New(normalize.Lenient(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		raw  string
		want []model.Relation
	}{
		{"https://web.archive.org/web/20240115083000/https://example.com/report?id=3",
			[]model.Relation{{Type: "archive_of", Target: "https://example.com/report?id=3", CapturedAt: "2024-01-15T08:30:00Z"}}},
		{"http://Web.Archive.org/web/20240115083000id_/http://example.com/",
			[]model.Relation{{Type: "archive_of", Target: "http://example.com/", CapturedAt: "2024-01-15T08:30:00Z"}}},
		{"https://web.archive.org/web/2024/https://example.com/",
			[]model.Relation{{Type: "archive_of", Target: "https://example.com/"}}},
		{"https://archive.ph/2019.01.31-123456/https://example.com/a",
			[]model.Relation{{Type: "archive_of", Target: "https://example.com/a", CapturedAt: "2019-01-31T12:34:56Z"}}},
		{"https://archive.today/newest/https://example.com/a",
			[]model.Relation{{Type: "archive_of", Target: "https://example.com/a"}}},
		{"https://example-com.cdn.ampproject.org/c/s/example.com/news/story.amp.html",
			[]model.Relation{{Type: "format_of", Target: "https://example.com/news/story.amp.html", Format: "amp"}}},
		{"https://www.google.com/amp/s/www.bbc.co.uk/news/amp/world-1",
			[]model.Relation{{Type: "format_of", Target: "https://www.bbc.co.uk/news/amp/world-1", Format: "amp"}}},
		// Not detected: a short archive.today id names no target; other
		// hosts and look-alikes are just URLs.
		{"https://archive.ph/AbCdE", nil},
		{"https://web.archive.org.evil.example/web/20240115083000/https://example.com/", nil},
		{"https://example.com/web/20240115083000/https://example.com/", nil},
		{"https://www.google.com/search?q=amp", nil},
	} {
		res, _ := n.Normalize(tc.raw)
		got := citestore.DetectRelations(tc.raw, res.Parsed)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("DetectRelations(%q) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
}
