package extract

import (
	"regexp"
	"strings"
)

// Soft-error classes, as recorded in Evidence.SoftError. A retrieval with any
// of them never confirms identity and never counts as shared content: an
// error page, a login wall or a "not found" page served with 200 looks the
// same for every URL of a site.
const (
	ClassOK          = ""            // a 2xx response with a text that reads as a page
	ClassNoResponse  = "no-response" // no HTTP response (status 0)
	ClassRedirect    = "http-3xx"    // the chain ended on a redirect that was not followed
	ClassClientError = "http-4xx"
	ClassServerError = "http-5xx"
	ClassNotFound    = "soft-404"   // a 2xx whose text says the page does not exist
	ClassLoginWall   = "login-wall" // a 2xx whose text asks to sign in or subscribe
	ClassEmpty       = "empty"      // a 2xx with no main text
)

// shortPage is the most words a page may have and still be read as a
// "not found" page or a login wall: an article that mentions "page not
// found" in its third paragraph is an article.
const shortPage = 250

var (
	notFoundRE = regexp.MustCompile(`(?i)\b(404|page not found|not found|page (does not|doesn't|no longer) exist|no longer available|cannot be found|could ?n[o']t (be )?find (the|this|that) page|seite nicht gefunden|page introuvable|página no encontrada|pagina non trovata)\b`)
	loginRE    = regexp.MustCompile(`(?i)\b((sign|log) ?in to (continue|read|view|see|access)|please (sign|log) ?in|you must be (signed|logged) ?in|subscribe (now )?to (continue|keep) reading|create (a|an) (free )?account to (continue|read)|this content is for (subscribers|members) only)\b`)
)

// Classify gives the soft-error class of a retrieval from its final status,
// the page's title and normalized main text, and whether the page has a
// password field. The text rules apply to short pages only (shortPage
// words): the title or the first 300 bytes of the text saying "not found"
// make a soft 404; a password field, or text asking to sign in or
// subscribe, makes a login wall.
func Classify(status int, title, text string, passwordField bool) string {
	switch {
	case status == 0:
		return ClassNoResponse
	case status >= 500:
		return ClassServerError
	case status >= 400:
		return ClassClientError
	case status >= 300:
		return ClassRedirect
	}
	words := wordCount(text)
	if words == 0 {
		return ClassEmpty
	}
	if words <= shortPage {
		head := text
		if len(head) > 300 {
			head = strings.ToValidUTF8(head[:300], "")
		}
		if notFoundRE.MatchString(title) || notFoundRE.MatchString(head) {
			return ClassNotFound
		}
		if passwordField || loginRE.MatchString(text) {
			return ClassLoginWall
		}
	}
	return ClassOK
}
