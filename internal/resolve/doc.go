// Package resolve fetches cited URLs and reports what it observed as
// model.Retrieval values: every redirect hop, the final response's status,
// content type and SHA-256 content hash, and the canonical URLs the
// response declared in its Link header and its HTML head. It knows nothing
// of the graph; internal/ingest records what it returns.
//
// # Basics
//
// New returns a Fetcher for a Policy; Fetch retrieves one URL. Redirects are
// followed by hand, one request at a time, so that each hop is observed:
// a 301, 302, 303, 307 or 308 response with a Location header is a hop,
// whose Location is resolved against the URL requested (RFC 9110 §10.2.2)
// and requested next with GET, without its fragment. Any other response is
// the final one. Every request is bounded by Policy.Timeout, from dialling
// to the end of its body, its headers by 1 MiB, and every final body by
// Policy.MaxBodyBytes. Of the canonical URLs a response declares, at most
// MaxCanonicals distinct ones from the Link header and as many from the
// HTML head are kept; the retrieval counts the rest in CanonicalDropped.
// Both parsers take time linear in their input.
//
// A retrieval that fails is still an observation: Fetch returns it with an
// Outcome code saying why (see the Outcome constants) and OutcomeError
// saying where. Fetch returns an error only when its context was cancelled;
// that retrieval is unfinished and must not be recorded.
//
// # Captures and bodies
//
// With Options.Capture, every exchange of a retrieval is handed to the
// capture writer (internal/capture): each redirect's request head (as sent,
// in HTTP/1.1 form), response head (as received), up to 4 KiB of its body
// and the server's address, then the final one's with its body as read up
// to Policy.MaxBodyBytes, marked truncated past it. The final record's
// reference becomes Retrieval.SnapshotRef; a capture that fails makes the
// outcome capture-error and keeps the rest of what was observed.
// FetchBody returns the final body as well, for extraction; Fetch does not
// keep it.
//
// # Safety
//
// Unless Policy.AllowPrivate is set, a Fetcher refuses to connect to
// loopback, private, link-local, multicast, unspecified and other
// non-public addresses (see blockedPrefixes) and to ports outside
// Policy.Ports. The address is checked by the dialer's Control function on
// the socket actually being connected, after name resolution, so a name
// that resolves to an internal address (DNS rebinding) and a redirect to
// one are refused alike. Proxies from the environment are never used: a
// proxy would make the dialled address the proxy's.
//
// # Caveats
//
// The content hash is over the body bytes exactly as sent: no
// Accept-Encoding other than identity is offered and nothing is decoded. A
// body longer than Policy.MaxBodyBytes gets no hash at all (outcome
// body-too-large), because a hash of a prefix would pass for a content
// hash. Cookies are not kept between hops.
//
// resolve imports internal/model, and may import internal/capture and
// internal/extract for the evidence of what it fetched; it must not import internal/ingest, internal/graph or any other
// package that links the store, so that the fetcher can run where no
// database is open. cmd/provgraph hands its Fetch to ingest.Resolve.
package resolve
