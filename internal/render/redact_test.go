package render

import "testing"

var redactTests = []struct {
	in, want string
}{
	{"https://example.org/a", "https://example.org/a"},
	{"https://user:secret@example.org/a", "https://user:***@example.org/a"},
	{"https://token@example.org/a", "https://***@example.org/a"},
	{"https://user:@example.org/", "https://***@example.org/"},
	{"HTTPS://u:p@X.com:443/a@b?c=d@e#f@g", "HTTPS://u:***@X.com:443/a@b?c=d@e#f@g"},
	{"  https:\\\\u:p@x.com\\a", "  https:\\\\u:***@x.com\\a"},
	{"https:u:p@x.com/", "https:u:***@x.com/"},
	{"https://a@b:c@host/", "https://a@b:***@host/"},
	{"https://u:p ss@x.com/", "https://u:***@x.com/"},
	{"https://u:p\tw@x.com/", "https://u:***@x.com/"},
	{"ftp://u:p@x.com", "ftp://u:***@x.com"},
	{"git+ssh://git:pw@host/repo", "git+ssh://git:***@host/repo"},
	{"//u:p@host/x", "//u:***@host/x"},
	{"mailto:someone@example.org", "mailto:someone@example.org"},
	{"https://example.org/?email=me@example.org", "https://example.org/?email=me@example.org"},
	{"user:secret@", "user:***@"},
	{"tok@", "***@"},
	{"us%65r:p ss@", "us%65r:***@"},
	{"question about me@home", "question about me@home"},
	{`key https://u:p@x.com/ under policy p`, `key https://u:***@x.com/ under policy p`},
	{`normalize "https://user:secret@example.org/a": userinfo at byte 8: "user:secret@" is a validation error`,
		`normalize "https://user:***@example.org/a": userinfo at byte 8: "user:***@" is a validation error`},
	{`the URL Standard would rewrite "us%65r:p ss@" as "us%65r:p%20ss@"; policy`,
		`the URL Standard would rewrite "us%65r:***@" as "us%65r:***@"; policy`},
	{"see https://a:b@x.org and http://c:d@y.org/", "see https://a:***@x.org and http://c:***@y.org/"},
}

func TestRedactUserinfo(t *testing.T) {
	for _, tt := range redactTests {
		got := redactUserinfo(tt.in)
		if got != tt.want {
			t.Errorf("redactUserinfo(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := redactUserinfo(got); again != got {
			t.Errorf("redactUserinfo is not idempotent on %q: %q", got, again)
		}
	}
}

func TestRedactedCopiesAndLeavesOriginal(t *testing.T) {
	type inner struct {
		URL  string
		List []string
	}
	type outer struct {
		Raw     string
		Frag    *string
		In      *inner
		Ins     []*inner
		Map     map[string]string
		private string
	}
	frag := "https://a:b@x/"
	v := &outer{Raw: "https://u:p@x/", Frag: &frag, In: &inner{URL: "https://u:p@y/", List: []string{"t@"}},
		Ins: []*inner{{URL: "https://q:r@z/"}}, Map: map[string]string{"k": "https://m:n@w/"}, private: "https://u:p@x/"}
	r := Redacted(v)
	if r.Raw != "https://u:***@x/" || *r.Frag != "https://a:***@x/" || r.In.URL != "https://u:***@y/" || r.In.List[0] != "***@" ||
		r.Ins[0].URL != "https://q:***@z/" || r.Map["k"] != "https://m:***@w/" {
		t.Errorf("redacted = %+v %+v %+v", r, r.In, r.Ins[0])
	}
	if r.private != v.private {
		t.Errorf("unexported field changed: %q", r.private)
	}
	if v.Raw != "https://u:p@x/" || frag != "https://a:b@x/" || v.In.URL != "https://u:p@y/" || v.In.List[0] != "t@" ||
		v.Ins[0].URL != "https://q:r@z/" || v.Map["k"] != "https://m:n@w/" {
		t.Errorf("redacted changed its argument: %+v %+v", v, v.In)
	}
}
