package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io/fs"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/ingest"
	"github.com/provgraph/provgraph/internal/model"
	"github.com/provgraph/provgraph/internal/normalize"
	"github.com/provgraph/provgraph/internal/query"
	"github.com/provgraph/provgraph/internal/service"
)

// Defaults of Options' limits.
const (
	DefaultMaxBody      = 64 << 10  // bytes of a decision or query request
	DefaultMaxIngest    = 256 << 20 // bytes of an ingest request
	DefaultQueryTimeout = 10 * time.Second
	DefaultQueryRows    = 1000
	DefaultPageSize     = 50
	MaxPageSize         = 1000
)

// Options configures a Server. The zero value serves read-write without
// tokens, with the default limits.
type Options struct {
	// DB is the database file's path, for messages.
	DB string
	// Policy chooses the policy the groups are under ("" for the latest).
	Policy    string
	MaxShared int // 0 means model.DefaultMaxShared
	// ReadOnly serves no writes: every POST answers 405.
	ReadOnly bool
	// Bounded holds no group: every request reads what it shows from the
	// grouping view and the group records (bounded.go), in memory bounded
	// by the page, for a database whose groups would not fit in memory.
	// The queue is then paged in the groups' own order, and the filters
	// that select among every group are refused.
	Bounded bool
	// Notice, when set, is told what the server does at start and after
	// an ingest besides serving (building the group records), a line at a
	// time.
	Notice func(string)
	// Tokens maps each bearer token to the reviewer it names. Empty means
	// no authentication (loopback only; the command checks).
	Tokens map[string]string
	// IngestPolicy is the policy POST /api/ingest normalizes with (nil:
	// the default policy).
	IngestPolicy *normalize.Policy
	MaxBody      int64         // 0 means DefaultMaxBody
	MaxIngest    int64         // 0 means DefaultMaxIngest
	QueryTimeout time.Duration // 0 means DefaultQueryTimeout
	QueryRows    int           // 0 means DefaultQueryRows
	// WorkMem bounds the memory of each POST /api/ingest's check of
	// citation ids, past which the ids are sorted on disk in TempDir
	// (ingest.Options.WorkMem: 0 means ingest.DefaultWorkMem).
	WorkMem int64
	// TempDir is the directory of POST /api/ingest's spool of the request
	// body and of its run's temporary files, each unlinked as soon as it
	// is created; "" means os.TempDir(), read at each request.
	TempDir string
	// Now is the clock of decisions (nil: time.Now).
	Now func() time.Time
	// BeforeCommit, when set, is called with each decision's group id (a
	// pair's two citation ids) before its batch is written: tests stop the
	// server there.
	BeforeCommit func(groupID string)
	// AfterIngestBatch, when set, is called after each committed batch of
	// an ingest's write pass: tests kill the server there.
	AfterIngestBatch func()
	// IngestProgress, when set, is called with each progress report of an
	// ingest's run (the validation pass reports every 10,000 lines): tests
	// look at the run's open files there.
	IngestProgress func(ingest.Progress)
}

// Server serves one open store.
type Server struct {
	st  *graph.Store
	o   Options
	mux *http.ServeMux
	tpl *template.Template

	wmu sync.Mutex // held by every write (decision, ingest)

	rmu   sync.Mutex // held while the first state is computed
	cmu   sync.Mutex // guards cache
	cache *service.Reviewed

	bs *boundedState // a bounded server's state (Options.Bounded), guarded by cmu

	readers chan struct{} // a slot per request reading at once (trimmed)

	pages    pageCache // pages computed from cache
	lineages pageCache // group pages' lineages, per cache.Report

	// gen counts the writes committed through the server (each ingest
	// batch, each decision): the state GET /api/stats was computed for.
	gen atomic.Uint64
	// data counts the writes that may change more than the decisions
	// (each ingest batch, each ingest's end): while it stays, a new state
	// needs only its review counts computed again.
	data atomic.Uint64
	smu  sync.Mutex // held while the stats are computed: one at a time
	last *statsAt   // the last stats computed, guarded by smu
	// statsComputed counts the full computations of the stats (tests
	// check that a decision causes none).
	statsComputed atomic.Uint64
}

//go:embed assets
var assets embed.FS

// New returns a server of st. st stays the caller's to close, after the
// server has stopped.
func New(st *graph.Store, o Options) (*Server, error) {
	if o.MaxShared == 0 {
		o.MaxShared = model.DefaultMaxShared
	}
	if o.MaxBody == 0 {
		o.MaxBody = DefaultMaxBody
	}
	if o.MaxIngest == 0 {
		o.MaxIngest = DefaultMaxIngest
	}
	if o.QueryTimeout == 0 {
		o.QueryTimeout = DefaultQueryTimeout
	}
	if o.QueryRows == 0 {
		o.QueryRows = DefaultQueryRows
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.IngestPolicy == nil {
		p, err := normalize.LoadPolicy("default")
		if err != nil {
			return nil, err
		}
		o.IngestPolicy = p
	}
	tpl, err := template.New("").Funcs(funcs).ParseFS(assets, "assets/*.html")
	if err != nil {
		return nil, err
	}
	s := &Server{st: st, o: o, mux: http.NewServeMux(), tpl: tpl, readers: make(chan struct{}, maxReaders())}
	s.routes()
	return s, nil
}

// Handler returns the server's handler, with the security headers and
// authentication applied to every request.
func (s *Server) Handler() http.Handler { return s.secure(s.trimmed(s.mux)) }

// trimmed keeps the file's mapped pages under the store's mapped limit
// while requests read it (graph.Store.WatchMapped) and after each answer
// (TrimMapped): every page a request reads stays mapped, and counted in
// the server's resident memory, until released, and where the page cache
// holds the file in large folios one read maps up to 2 MiB.
//
// It also bounds how many requests read at once (readers): each holds
// what it reads in memory while it answers (a page of 100 whole groups at
// ten million citations, some 40 MB), so that the server's memory does
// not grow with its clients; the others wait their turn. The assets and
// an ingest (whose memory --work-mem bounds, and which runs for minutes)
// do not wait.
func (s *Server) trimmed(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/static/") && r.URL.Path != "/api/ingest" {
			select {
			case s.readers <- struct{}{}:
				defer func() { <-s.readers }()
			case <-r.Context().Done():
				return // the client went away while it waited
			}
		}
		done := s.st.WatchMapped()
		h.ServeHTTP(w, r)
		done()
		s.st.TrimMapped()
	})
}

// maxReaders is how many requests read the store at once (trimmed): four
// times the processors Go runs on, at least eight, as reads wait for the
// disk and for page faults as much as for a processor.
func maxReaders() int { return max(8, 4*runtime.GOMAXPROCS(0)) }

func (s *Server) routes() {
	static, _ := fs.Sub(assets, "assets/static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /api/groups", s.apiGroups)
	s.mux.HandleFunc("GET /api/groups/{id}", s.apiGroup)
	s.mux.HandleFunc("POST /api/groups/{id}/reviews", s.write(s.apiDecide))
	s.mux.HandleFunc("POST /api/pairs/reviews", s.write(s.apiDecidePair))
	s.mux.HandleFunc("POST /api/relations/reviews", s.write(s.apiDecideRelation))
	s.mux.HandleFunc("GET /api/citations/{id}/lineage", s.apiLineage)
	s.mux.HandleFunc("GET /api/stats", s.apiStats)
	s.mux.HandleFunc("POST /api/ingest", s.write(s.apiIngest))
	s.mux.HandleFunc("POST /api/query", s.apiQuery)
	s.mux.HandleFunc("GET /{$}", s.uiQueue)
	s.mux.HandleFunc("GET /groups/{id}", s.uiGroup)
	s.mux.HandleFunc("POST /groups/{id}/decide", s.write(s.uiDecide))
	s.mux.HandleFunc("POST /groups/{id}/decide-pair", s.write(s.uiDecidePair))
	s.mux.HandleFunc("POST /groups/{id}/decide-relation", s.write(s.uiDecideRelation))
	s.mux.HandleFunc("GET /citations/{id}/lineage", s.uiLineage)
	s.mux.HandleFunc("GET /stats", s.uiStats)
	s.mux.HandleFunc("GET /login", s.uiLogin)
	s.mux.HandleFunc("POST /login", s.uiLoginPost)
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.fail(w, r, http.StatusNotFound, errors.New("no such page: "+r.URL.Path))
	})
}

// write refuses writes on a read-only server.
func (s *Server) write(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.o.ReadOnly {
			s.fail(w, r, http.StatusMethodNotAllowed, errors.New("this server is read-only (--read-only): it records no decisions and ingests nothing"))
			return
		}
		h(w, r)
	}
}

// csp allows only the embedded script and style: no inline script, no
// framing, forms posting to the server only.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// sessionCookie holds a signed-in reviewer's token in the UI.
const sessionCookie = "pg_session"

type ctxKey int

const reviewerKey ctxKey = 0

// secure sets the security headers and, with tokens, authenticates.
func (s *Server) secure(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", csp)
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("Referrer-Policy", "no-referrer")
		hd.Set("Cache-Control", "no-store")
		if len(s.o.Tokens) > 0 {
			name, ok := s.authenticate(r)
			public := r.URL.Path == "/login" || strings.HasPrefix(r.URL.Path, "/static/")
			if !ok && !public {
				if strings.HasPrefix(r.URL.Path, "/api/") {
					hd.Set("WWW-Authenticate", `Bearer realm="provgraph"`)
					s.fail(w, r, http.StatusUnauthorized, errors.New("missing or wrong token: send Authorization: Bearer TOKEN with a token from the server's token file"))
					return
				}
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), reviewerKey, name))
		}
		h.ServeHTTP(w, r)
	})
}

// authenticate finds the reviewer of the request's token, comparing it
// with every token in constant time.
func (s *Server) authenticate(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		if c, err := r.Cookie(sessionCookie); err == nil {
			tok = c.Value
		}
	}
	return s.reviewerOf(tok)
}

func (s *Server) reviewerOf(tok string) (string, bool) {
	name, found := "", 0
	for t, n := range s.o.Tokens {
		if subtle.ConstantTimeCompare([]byte(t), []byte(tok)) == 1 {
			name, found = n, 1
		}
	}
	return name, found == 1 && tok != ""
}

// authReviewer is the reviewer the credentials name, "" without tokens.
func authReviewer(r *http.Request) string {
	n, _ := r.Context().Value(reviewerKey).(string)
	return n
}

// reviewed returns the groups and decisions of the last committed state
// the server has computed. Readers never wait for a computation but the
// first: a write computes the next state before it swaps it in.
func (s *Server) reviewed(ctx context.Context) (*service.Reviewed, error) {
	s.cmu.Lock()
	r := s.cache
	s.cmu.Unlock()
	if r != nil {
		return r, nil
	}
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.cmu.Lock()
	r = s.cache
	s.cmu.Unlock()
	if r != nil {
		return r, nil
	}
	return s.refresh(ctx)
}

// refresh computes the groups and decisions from the store and serves
// them from then on.
func (s *Server) refresh(ctx context.Context) (*service.Reviewed, error) {
	// Detail: the engine and observation time the engine and since
	// filters test (6 % more memory at a million citations).
	r, err := service.LoadReviewed(ctx, s.st, s.o.Policy, query.GroupOptions{MaxShared: s.o.MaxShared, MinSize: 1, Review: true, Detail: true})
	if err != nil {
		return nil, err
	}
	// The queue in the orders the UI and the API start with is selected
	// here, before the state is served: otherwise the first reader after
	// each write sorts every group (a fifth of a second at a million
	// citations) while the others wait for it.
	for _, sort := range []string{"risk", ""} {
		if _, err := r.Filter(service.GroupFilter{Queue: true, Sort: sort, Limit: 1}); err != nil {
			return nil, err
		}
	}
	s.setCache(r)
	// A failed read here is not this write's: a reader of the group
	// meets it and is told.
	_ = s.warmLineages(ctx, r)
	return r, nil
}

// current reports whether r is the state the server serves now.
func (s *Server) current(r *service.Reviewed) func() bool {
	return func() bool {
		s.cmu.Lock()
		defer s.cmu.Unlock()
		return s.cache == r
	}
}

// currentGroups reports whether rep holds the groups the server serves
// now.
func (s *Server) currentGroups(rep *query.Report) func() bool {
	return func() bool {
		s.cmu.Lock()
		defer s.cmu.Unlock()
		return s.cache != nil && s.cache.Report == rep
	}
}

func (s *Server) setCache(r *service.Reviewed) {
	s.cmu.Lock()
	s.cache = r
	s.cmu.Unlock()
}

// randomToken returns 32 random hex digits.
func randomToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Warm computes the groups and decisions before the server listens, so
// that the first queue page is fast and a damaged database is found at
// start rather than by the first reviewer.
func (s *Server) Warm(ctx context.Context) error {
	done := s.st.WatchMapped()
	defer s.st.TrimMapped()
	defer done()
	if s.o.Bounded {
		_, err := s.boundedNow(ctx)
		return err
	}
	_, err := s.reviewed(ctx)
	return err
}
