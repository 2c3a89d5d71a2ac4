// Package synth generates realistic synthetic citation observations for
// benchmarks and crash tests: answers from several engines citing a pool of
// sites with tracking parameters, fragments, case and slash variants,
// redirect chains, canonical declarations, AMP and archive copies, and a
// small share of URLs that the default policy rejects. The output for a
// given seed is always the same.
//
// synth imports only internal/model (it writes model.Record values as JSON
// Lines) and must not import ingest, graph or query: a generator that used the
// code under test could not catch its mistakes.
package synth

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/provgraph/provgraph/internal/model"
)

// Options configures a generator. Zero values mean the defaults.
type Options struct {
	Seed uint64
	// Sites is the size of the host pool (default 2000); fewer sites mean
	// more repeated URLs across answers.
	Sites int
}

var (
	engines   = []string{"chatgpt", "perplexity", "gemini", "copilot", "claude"}
	tlds      = []string{"com", "org", "net", "io", "de", "co.uk", "fr", "jp", "edu", "gov"}
	words     = []string{"data", "provenance", "report", "guide", "news", "policy", "climate", "health", "market", "science", "energy", "law", "study", "review", "api", "docs", "faq", "world", "tech", "analysis", "Research", "Users", "Alice", "résumé", "日本"}
	trackers  = []string{"utm_source=chatgpt.com", "utm_source=perplexity", "utm_medium=referral", "utm_campaign=spring", "gclid=Cj0KCQ", "fbclid=IwAR2x", "msclkid=7f3a", "srsltid=AfmBOo", "mc_cid=abc123"}
	content   = []string{"id=42", "page=2", "lang=fr", "version=2.1", "q=provenance+graph", "output=pdf", "ref=hn", "sort=new"}
	fragments = []string{"#summary", "#section-2", "#:~:text=provenance%20graph", "#Methods", "#"}
	rejects   = []string{"https://user:pass@%s/private", "https://%s/a b", "https://%s/100%%zz", "%s/no-scheme", "javascript:alert(1)"}
)

// Generator writes citation records.
type Generator struct {
	rnd   *rand.Rand
	sites []string
	now   time.Time
	n     int
}

// New returns a generator.
func New(opts Options) *Generator {
	sites := opts.Sites
	if sites <= 0 {
		sites = 2000
	}
	g := &Generator{rnd: rand.New(rand.NewPCG(opts.Seed, 0x9e3779b97f4a7c15)), now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i := 0; i < sites; i++ {
		host := g.pick(words) + fmt.Sprint(i) + "." + g.pick(tlds)
		host = strings.ToLower(strings.ReplaceAll(host, "é", "e"))
		if strings.Contains(host, "日本") {
			host = "example" + fmt.Sprint(i) + ".jp"
		}
		if g.rnd.IntN(3) == 0 {
			host = "www." + host
		}
		g.sites = append(g.sites, host)
	}
	return g
}

func (g *Generator) pick(list []string) string { return list[g.rnd.IntN(len(list))] }

// path returns a path that depends only on (site, k), so that different
// answers cite the same pages.
func (g *Generator) path(site, k int) string {
	r := rand.New(rand.NewPCG(uint64(site), uint64(k)))
	n := 1 + r.IntN(4)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = words[r.IntN(len(words))]
	}
	p := "/" + strings.Join(parts, "/")
	if r.IntN(4) == 0 {
		p += "/"
	}
	return p
}

// URL returns one raw cited URL.
func (g *Generator) URL() string {
	if g.rnd.IntN(100) < 2 {
		return fmt.Sprintf(g.pick(rejects), g.sites[g.rnd.IntN(len(g.sites))])
	}
	site := g.rnd.IntN(len(g.sites))
	host := g.sites[site]
	path := g.path(site, g.rnd.IntN(20))
	scheme := "https://"
	switch g.rnd.IntN(20) {
	case 0:
		scheme = "http://"
	case 1:
		host = strings.ToUpper(host[:1]) + host[1:]
	case 2:
		path = strings.ToLower(path)
	}
	var q []string
	if g.rnd.IntN(3) == 0 {
		q = append(q, g.pick(content))
	}
	for g.rnd.IntN(2) == 0 && len(q) < 4 {
		q = append(q, g.pick(trackers))
	}
	u := scheme + host + path
	if len(q) > 0 {
		u += "?" + strings.Join(q, "&")
	}
	if g.rnd.IntN(6) == 0 {
		u += g.pick(fragments)
	}
	return u
}

// hop, retrieval and record are model.Hop, model.Retrieval and
// model.Record as a producer writes them, with statuses and positions as
// JSON numbers: model.Integer only reads numbers (it keeps their text, and
// marshals as a string for Record.Digest), so the writer needs its own
// shape. The leaves (model.Canonical, model.Relation) are shared.
type hop struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Status int    `json:"status"`
	At     string `json:"at"`
}

type retrieval struct {
	RetrievedAt string            `json:"retrieved_at"`
	Hops        []hop             `json:"hops,omitempty"`
	FinalURL    string            `json:"final_url"`
	FinalStatus int               `json:"final_status"`
	ContentHash string            `json:"content_hash"`
	Canonical   []model.Canonical `json:"canonical,omitempty"`
}

type record struct {
	CitationID string           `json:"citation_id"`
	Engine     string           `json:"engine"`
	AnswerID   string           `json:"answer_id"`
	Position   int              `json:"position"`
	Question   string           `json:"question"`
	ObservedAt string           `json:"observed_at"`
	RawURL     string           `json:"raw_url"`
	Retrieval  *retrieval       `json:"retrieval,omitempty"`
	Relations  []model.Relation `json:"relations,omitempty"`
}

// Write writes n records, one JSON object per line.
func (g *Generator) Write(w io.Writer, n int) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for written := 0; written < n; {
		g.n++
		engine := g.pick(engines)
		answer := fmt.Sprintf("%s-%d", engine, g.n)
		question := "What does " + g.pick(words) + " say about " + g.pick(words) + "?"
		g.now = g.now.Add(time.Duration(1+g.rnd.IntN(120)) * time.Second)
		cites := 3 + g.rnd.IntN(6)
		for pos := 1; pos <= cites && written < n; pos++ {
			raw := g.URL()
			r := record{
				CitationID: fmt.Sprintf("%s-%d", answer, pos),
				Engine:     engine, AnswerID: answer, Position: pos, Question: question,
				ObservedAt: g.now.Format(time.RFC3339),
				RawURL:     raw,
			}
			if g.rnd.IntN(4) == 0 && strings.HasPrefix(raw, "http") {
				r.Retrieval = g.retrieval(raw)
			}
			if g.rnd.IntN(40) == 0 {
				r.Relations = []model.Relation{{Type: model.RelArchiveOf, Target: "https://web.archive.org/web/20250101000000/" + raw, CapturedAt: "2025-01-01T00:00:00Z"}}
			}
			if err := enc.Encode(&r); err != nil {
				return err
			}
			written++
		}
	}
	return nil
}

func (g *Generator) retrieval(raw string) *retrieval {
	at := g.now.Add(time.Minute).Format(time.RFC3339)
	final := strings.SplitN(raw, "#", 2)[0]
	if i := strings.IndexByte(final, '?'); i >= 0 && g.rnd.IntN(2) == 0 {
		final = final[:i]
	}
	rt := &retrieval{RetrievedAt: at, FinalStatus: 200, ContentHash: fmt.Sprintf("sha256:%064x", g.rnd.Uint64())}
	if strings.HasPrefix(final, "http://") && g.rnd.IntN(2) == 0 {
		to := "https://" + strings.TrimPrefix(final, "http://")
		rt.Hops = append(rt.Hops, hop{From: final, To: to, Status: 301, At: at})
		final = to
	}
	rt.FinalURL = final
	if g.rnd.IntN(3) == 0 {
		rt.Canonical = []model.Canonical{{URL: final, Source: model.SourceHTMLLink}}
	}
	return rt
}
