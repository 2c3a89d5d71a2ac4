package extract

import (
	"strings"
	"testing"
)

const loginPage = `<html><head><title>Sign in - Acme Research</title></head><body>
<nav><a href="/">Acme</a></nav><main><h1>Sign in to continue</h1>
<p>Please sign in to read this report. Subscribers get unlimited access.</p>
<form><input name="user"><input type="password" name="pw"><button>Sign in</button></form></main></body></html>`

const soft404Page = `<html><head><title>Acme Research</title></head><body>
<nav><a href="/">Home</a><a href="/reports">Reports</a></nav>
<main><h1>Sorry, page not found</h1><p>The page you requested may have moved. Try the search box or go back to the home page.</p></main>
<footer>© Acme</footer></body></html>`

// TestClassify covers every soft-error class and checks that the text rules
// leave long articles alone.
func TestClassify(t *testing.T) {
	longArticle := strings.Repeat("The study measured sediment in forty rivers over ten winters. ", 40) + "The old gauge page was not found in the archive."
	for _, tc := range []struct {
		name     string
		status   int
		title    string
		text     string
		password bool
		want     string
	}{
		{"no response", 0, "", "", false, ClassNoResponse},
		{"404", 404, "Not Found", "not found", false, ClassClientError},
		{"410 with an article", 410, "Gone", longArticle, false, ClassClientError},
		{"503", 503, "", "", false, ClassServerError},
		{"unfollowed redirect", 301, "", "", false, ClassRedirect},
		{"empty 200", 200, "Acme", "", false, ClassEmpty},
		{"soft 404 by title", 200, "Page Not Found | Acme", "Go back home.", false, ClassNotFound},
		{"soft 404 by text", 200, "Acme", "Sorry, we couldn't find that page. Try searching.", false, ClassNotFound},
		{"login wall by field", 200, "Acme", "Welcome back. User name. Password.", true, ClassLoginWall},
		{"login wall by text", 200, "Acme", "Subscribe now to continue reading this article.", false, ClassLoginWall},
		{"long article mentioning not found", 200, "Rivers", longArticle, false, ClassOK},
		{"long article with a login box", 200, "Rivers", longArticle, true, ClassOK},
		{"ordinary page", 200, "Rivers", "Rivers carry more sediment after wildfires.", false, ClassOK},
	} {
		if got := Classify(tc.status, tc.title, tc.text, tc.password); got != tc.want {
			t.Errorf("%s: Classify(%d, %q, ...) = %q, want %q", tc.name, tc.status, tc.title, got, tc.want)
		}
	}
}

// TestSoftErrorPages runs whole pages through Extract: a login wall and a
// soft 404 served with 200, and a 404, never confirm identity.
func TestSoftErrorPages(t *testing.T) {
	for _, tc := range []struct {
		name   string
		page   string
		status int
		want   string
	}{
		{"login wall", loginPage, 200, ClassLoginWall},
		{"soft 404", soft404Page, 200, ClassNotFound},
		{"404", soft404Page, 404, ClassClientError},
	} {
		in := htmlInput([]byte(tc.page))
		in.Status = tc.status
		ev := Extract(in)
		if ev.SoftError != tc.want {
			t.Errorf("%s: soft error %q, want %q (text %q)", tc.name, ev.SoftError, tc.want, ev.Text)
		}
		if ev.Confirms() {
			t.Errorf("%s: confirms identity", tc.name)
		}
	}
}
