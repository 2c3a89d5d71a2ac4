package render

import (
	"reflect"
	"strings"
)

// Raw URLs are evidence and are stored exactly, credentials included.
// --redact-userinfo hides the credentials in what a command prints; the
// database is never changed.

// redactedInfo is what the userinfo of a URL becomes under
// --redact-userinfo: "user:***" when it has a password, "***" otherwise
// (a user name alone is often an access token).
func redactedInfo(info string) string {
	if info == "" {
		return ""
	}
	if user, pass, ok := strings.Cut(info, ":"); ok && pass != "" {
		return user + ":***"
	}
	return "***"
}

// specialSchemes are the URL Standard's special schemes, whose authority
// starts after any number of slashes or backslashes, even none (§4.4).
var specialSchemes = map[string]bool{"http": true, "https": true, "ws": true, "wss": true, "ftp": true, "file": true}

// redactUserinfo replaces the userinfo (the credentials before the last
// "@" of the authority) of the URLs in s with redactedInfo, for
// --redact-userinfo. It finds them where provgraph prints them:
//   - s itself is a URL, possibly with leading spaces: the authority
//     starts after "scheme://" (or "//"), or after "scheme:" and any
//     slashes for a special scheme, and ends at the next "/", "?" or "#";
//   - a URL inside a text (a reason, an error message): each "://" starts
//     an authority that also ends at a quote, "<", ">" or a line break;
//   - s is a userinfo followed by "@" (the userinfo rule's step), or a
//     text quotes one ("user:secret@" in a rejection message).
//
// It errs on the side of hiding: a backslash does not end the authority.
func redactUserinfo(s string) string {
	if !strings.Contains(s, "@") {
		return s
	}
	s = redactLeadingURL(s)
	s = redactEmbeddedURLs(s)
	if strings.HasSuffix(s, "@") && !strings.ContainsAny(s[:len(s)-1], "/?#@") {
		return redactedInfo(s[:len(s)-1]) + "@"
	}
	return redactQuotedInfo(s)
}

// redactAuthority redacts the userinfo of the authority that starts at
// start in s and ends at the first byte of stop (or the end of s).
func redactAuthority(s string, start int, stop string) (string, int) {
	end := len(s)
	if i := strings.IndexAny(s[start:], stop); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(s[start:end], '@')
	if at < 0 {
		return s, end
	}
	at += start
	red := redactedInfo(s[start:at])
	return s[:start] + red + s[at:], end - (at - start) + len(red)
}

func redactLeadingURL(s string) string {
	i := 0
	for i < len(s) && s[i] <= ' ' {
		i++
	}
	isSlash := func(c byte) bool { return c == '/' || c == '\\' }
	start := -1
	switch {
	case i+1 < len(s) && isSlash(s[i]) && isSlash(s[i+1]):
		start = i + 2
	case i < len(s) && isAlpha(s[i]):
		j := i + 1
		for j < len(s) && (isAlpha(s[j]) || s[j] >= '0' && s[j] <= '9' || s[j] == '+' || s[j] == '-' || s[j] == '.') {
			j++
		}
		if j == len(s) || s[j] != ':' {
			return s
		}
		j++
		if specialSchemes[strings.ToLower(s[i:j-1])] {
			for j < len(s) && isSlash(s[j]) {
				j++
			}
			start = j
		} else if strings.HasPrefix(s[j:], "//") {
			start = j + 2
		}
	}
	if start < 0 {
		return s
	}
	s, _ = redactAuthority(s, start, "/?#")
	return s
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func redactEmbeddedURLs(s string) string {
	for from := 0; ; {
		i := strings.Index(s[from:], "://")
		if i < 0 {
			return s
		}
		// The next URL may start inside this authority's span ("a@x.org
		// and http://b@y.org/"): look again from its start.
		from += i + 3
		s, _ = redactAuthority(s, from, "/?#\"'<>\n\r")
	}
}

// redactQuotedInfo redacts each double-quoted `"userinfo@"` in s.
func redactQuotedInfo(s string) string {
	for from := 0; ; {
		j := strings.Index(s[from:], `@"`)
		if j < 0 {
			return s
		}
		j += from
		from = j + 2
		k := strings.LastIndexByte(s[:j], '"')
		if k < 0 || strings.ContainsAny(s[k+1:j], "/?#@") {
			continue
		}
		red := redactedInfo(s[k+1 : j])
		s = s[:k+1] + red + s[j:]
		from = k + 1 + len(red) + 2
	}
}

// redacted returns a copy of v in which every string reachable through
// exported fields, slices, maps and pointers went through redactUserinfo;
// v itself is not changed. Query results are redacted this way before any
// output is written, so that a field added to them later is covered too.
func Redacted[T any](v T) T {
	c := reflect.ValueOf(&v).Elem()
	redactValue(c)
	return v
}

// redactValue redacts the settable value v in place, copying what it
// points to before changing it.
func redactValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		if s := redactUserinfo(v.String()); s != v.String() {
			v.SetString(s)
		}
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(v.Elem())
		redactValue(c.Elem())
		v.Set(c)
	case reflect.Interface:
		if v.IsNil() {
			return
		}
		c := reflect.New(v.Elem().Type()).Elem()
		c.Set(v.Elem())
		redactValue(c)
		v.Set(c)
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				redactValue(f)
			}
		}
	case reflect.Array:
		for i := range v.Len() {
			redactValue(v.Index(i))
		}
	case reflect.Slice:
		if v.IsNil() {
			return
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		reflect.Copy(c, v)
		for i := range c.Len() {
			redactValue(c.Index(i))
		}
		v.Set(c)
	case reflect.Map:
		if v.IsNil() {
			return
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			k := reflect.New(v.Type().Key()).Elem()
			k.Set(it.Key())
			redactValue(k)
			e := reflect.New(v.Type().Elem()).Elem()
			e.Set(it.Value())
			redactValue(e)
			c.SetMapIndex(k, e)
		}
		v.Set(c)
	}
}

// RedactIf returns v redacted when redact is set, and v itself otherwise.
func RedactIf[T any](redact bool, v T) T {
	if redact {
		return Redacted(v)
	}
	return v
}
