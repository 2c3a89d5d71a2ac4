package resolve

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"time"

	"github.com/provgraph/provgraph/internal/capture"
	"github.com/provgraph/provgraph/internal/model"
)

// Capturer keeps the exchanges of a retrieval: *capture.Writer, or in
// tests a writer that fails as a full disk would.
type Capturer interface {
	Write(capture.Exchange) (capture.Ref, error)
}

// fetchState is what one Fetch keeps across its requests: whether the body
// is wanted, the final body, and the first capture failure.
type fetchState struct {
	keep       bool
	body       *model.Body
	captureErr error
}

// exchange is one request and response as the capture needs them: the
// request head as sent, the server's address, the response head as
// received.
type exchange struct {
	date time.Time
	ip   string
	req  *http.Request
}

// trace notes the address of the server a request is sent to.
func (x *exchange) trace(req *http.Request) *http.Request {
	return req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Conn == nil {
				return
			}
			if host, _, err := net.SplitHostPort(info.Conn.RemoteAddr().String()); err == nil {
				x.ip = host
			}
		},
	}))
}

// capture writes the exchange with the response resp and the body as read,
// unless a capture of this retrieval failed already, and returns the
// response record's reference, or "" when nothing was written.
func (f *Fetcher) capture(st *fetchState, x *exchange, resp *http.Response, body []byte, truncated bool) string {
	if f.capturer == nil || st.captureErr != nil {
		return ""
	}
	var reqHead bytes.Buffer
	// The request as the transport sent it, in HTTP/1.1 form (the form
	// WARC records an HTTP/2 exchange in as well): GET has no body.
	fmt.Fprintf(&reqHead, "GET %s HTTP/1.1\r\nHost: %s\r\n", x.req.URL.RequestURI(), x.req.URL.Host)
	x.req.Header.Write(&reqHead)
	reqHead.WriteString("\r\n")
	var respHead bytes.Buffer
	fmt.Fprintf(&respHead, "%s %s\r\n", resp.Proto, resp.Status)
	resp.Header.Write(&respHead)
	respHead.WriteString("\r\n")
	ref, err := f.capturer.Write(capture.Exchange{
		URL: x.req.URL.String(), Date: x.date, IP: x.ip,
		Request: reqHead.Bytes(), ResponseHead: respHead.Bytes(),
		Body: body, Truncated: truncated,
	})
	if err != nil {
		st.captureErr = err
		return ""
	}
	return ref.String()
}
