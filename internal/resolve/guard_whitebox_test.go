package resolve

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/provgraph/provgraph/internal/model"
)

// TestGuardCatchesRedirectToInternal runs the default guard with one
// exception, the loopback test server, which redirects to a name that
// resolves to another loopback address: the redirect is recorded and the
// connection it leads to is refused when dialled.
func TestGuardCatchesRedirectToInternal(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://rebound.test/admin", http.StatusFound)
	}))
	defer srv.Close()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	f, err := New(&Options{
		Policy: model.FetchPolicy{UserAgent: "t", Timeout: time.Second, Ports: []int{80, 443, int(ap.Port())}},
		LookupHost: func(_ context.Context, host string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.guard.exempt = ap
	rt, err := f.Fetch(context.Background(), srv.URL+"/start")
	if err != nil {
		t.Fatal(err)
	}
	if rt.Outcome != model.OutcomeBlockedAddress || !strings.Contains(rt.OutcomeError, "127.0.0.2:80: loopback") {
		t.Errorf("outcome %q %q, want blocked-address at 127.0.0.2:80", rt.Outcome, rt.OutcomeError)
	}
	if len(rt.Hops) != 1 || rt.Hops[0].To != "http://rebound.test/admin" || rt.Hops[0].Status != "302" {
		t.Errorf("hops %+v, want the one redirect to http://rebound.test/admin", rt.Hops)
	}
	// Without the exception the server itself is refused at dial time.
	f.guard.exempt = netip.AddrPort{}
	rt, err = f.Fetch(context.Background(), "http://localhost:"+strconv.Itoa(int(ap.Port()))+"/start")
	if err != nil {
		t.Fatal(err)
	}
	if rt.Outcome != model.OutcomeBlockedAddress {
		t.Errorf("loopback server without the exception: outcome %q %q, want blocked-address", rt.Outcome, rt.OutcomeError)
	}
}
