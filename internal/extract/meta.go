package extract

import (
	"encoding/json"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Date sources, as recorded in DeclaredDate.Source.
const (
	SourceMetaPublished   = "meta:article:published_time"
	SourceMetaModified    = "meta:article:modified_time"
	SourceJSONLDPublished = "json-ld:datePublished"
	SourceJSONLDModified  = "json-ld:dateModified"
	SourceTimeElement     = "html:time"
)

// Limits on what the metadata walk keeps, so that a hostile page cannot make
// the evidence grow without bound.
const (
	maxDates      = 16      // declared dates kept
	maxJSONLD     = 1 << 20 // bytes of one JSON-LD script decoded
	maxFieldBytes = 2048    // bytes kept of a title or date value
)

// DeclaredDate is a date a page declares about itself, as written.
type DeclaredDate struct {
	Source string `json:"source"`
	Value  string `json:"value"`
}

// meta is what the walk of a document finds besides the main text.
type meta struct {
	title, ogTitle, lang string
	dates                []DeclaredDate
	passwordField        bool
}

// readMeta walks a parsed document once. It must run before Readability,
// which changes the tree.
func readMeta(doc *html.Node) meta {
	var m meta
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > MaxDepth {
			return
		}
		if n.Type == html.ElementNode {
			switch n.DataAtom {
			case atom.Html:
				m.lang = clip(strings.TrimSpace(attr(n, "lang")))
			case atom.Title:
				if m.title == "" {
					m.title = clip(NormalizeText(textOf(n)))
				}
			case atom.Meta:
				prop := strings.ToLower(attr(n, "property"))
				if prop == "" {
					prop = strings.ToLower(attr(n, "name"))
				}
				content := clip(strings.TrimSpace(attr(n, "content")))
				switch prop {
				case "og:title":
					if m.ogTitle == "" {
						m.ogTitle = NormalizeText(content)
					}
				case "article:published_time":
					m.addDate(SourceMetaPublished, content)
				case "article:modified_time":
					m.addDate(SourceMetaModified, content)
				}
			case atom.Time:
				m.addDate(SourceTimeElement, clip(strings.TrimSpace(attr(n, "datetime"))))
			case atom.Input:
				if strings.EqualFold(attr(n, "type"), "password") {
					m.passwordField = true
				}
			case atom.Script:
				if strings.EqualFold(strings.TrimSpace(attr(n, "type")), "application/ld+json") {
					m.readJSONLD(textOf(n))
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(doc, 0)
	return m
}

func (m *meta) addDate(source, value string) {
	if value == "" || len(m.dates) >= maxDates {
		return
	}
	for _, d := range m.dates {
		if d.Source == source && d.Value == value {
			return
		}
	}
	m.dates = append(m.dates, DeclaredDate{source, value})
}

// readJSONLD finds datePublished and dateModified anywhere in a JSON-LD
// script (top level, @graph, nested objects and arrays).
func (m *meta) readJSONLD(text string) {
	if len(text) > maxJSONLD {
		return
	}
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return
	}
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 32 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["datePublished"].(string); ok {
				m.addDate(SourceJSONLDPublished, clip(strings.TrimSpace(s)))
			}
			if s, ok := x["dateModified"].(string); ok {
				m.addDate(SourceJSONLDModified, clip(strings.TrimSpace(s)))
			}
			for _, c := range x {
				walk(c, depth+1)
			}
		case []any:
			for _, c := range x {
				walk(c, depth+1)
			}
		}
	}
	walk(v, 0)
}

// DatesDisagree reports whether a page's declared publication dates (meta,
// JSON-LD and <time> elements) name different days. Modification dates may
// differ from publication dates and are not compared.
func DatesDisagree(dates []DeclaredDate) bool {
	var day string
	for _, d := range dates {
		if d.Source == SourceMetaModified || d.Source == SourceJSONLDModified {
			continue
		}
		t, ok := parseDate(d.Value)
		if !ok {
			continue
		}
		s := t.UTC().Format("2006-01-02")
		if day != "" && s != day {
			return true
		}
		day = s
	}
	return false
}

func parseDate(s string) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Namespace == "" && strings.EqualFold(a.Key, key) {
			return a.Val
		}
	}
	return ""
}

// textOf concatenates the text below a node, up to maxJSONLD bytes.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node, depth int)
	walk = func(n *html.Node, depth int) {
		if depth > MaxDepth || b.Len() > maxJSONLD {
			return
		}
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

func clip(s string) string {
	if len(s) <= maxFieldBytes {
		return s
	}
	s = s[:maxFieldBytes]
	return strings.ToValidUTF8(s, "")
}
