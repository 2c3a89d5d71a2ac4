package resolve_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/resolve"
)

// TestCaptureExchanges: with Options.Capture, every hop and the final
// response are captured with the request head as sent, the response head
// as received, the server's address and the body as read; a body over the
// limit is captured up to it and marked truncated, and the retrieval's
// SnapshotRef names the final record (issue 14).
func TestCaptureExchanges(t *testing.T) {
	const limit = 100 // more than smallBody, less than /big
	mux := http.NewServeMux()
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/big", http.StatusFound)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Served-By", "fixture")
		w.Write([]byte(strings.Repeat("0123456789", 20)))
	})
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(smallBody))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	w, err := capture.Open(capture.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	f, err := resolve.New(&resolve.Options{
		Policy:  model.FetchPolicy{UserAgent: "provgraph-capture-test", AllowPrivate: true, MaxBodyBytes: limit},
		Capture: w,
		LookupHost: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]

	rt, body, err := f.FetchBody(context.Background(), "http://a.test:"+port+"/hop")
	if err != nil {
		t.Fatal(err)
	}
	if rt.Outcome != model.OutcomeBodyTooLarge || body == nil || len(body.Bytes) != limit || !body.Truncated {
		t.Fatalf("retrieval %+v, body %+v: want body-too-large with %d bytes kept, truncated", rt, body, limit)
	}
	ref, err := capture.ParseRef(rt.SnapshotRef)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := capture.Read(dir, ref)
	if err != nil {
		t.Fatal(err)
	}
	if resp.URL != "http://a.test:"+port+"/big" || resp.Status != 200 || !resp.Truncated ||
		string(resp.Body) != strings.Repeat("0123456789", 20)[:limit] || resp.Header["X-Served-By"][0] != "fixture" {
		t.Errorf("captured %+v", resp)
	}

	rt, _, err = f.FetchBody(context.Background(), "http://a.test:"+port+"/small")
	if err != nil || rt.Outcome != model.OutcomeOK {
		t.Fatalf("small: %+v, %v", rt, err)
	}
	ref, _ = capture.ParseRef(rt.SnapshotRef)
	if resp, err := capture.Read(dir, ref); err != nil || string(resp.Body) != smallBody || resp.Truncated {
		t.Errorf("small captured %+v, %v", resp, err)
	}
	// Fetch (no body wanted) still captures.
	rt, err = f.Fetch(context.Background(), "http://a.test:"+port+"/small")
	if err != nil || !strings.HasPrefix(rt.SnapshotRef, "warc:") {
		t.Errorf("Fetch: %+v, %v: want a snapshot reference", rt, err)
	}
}
