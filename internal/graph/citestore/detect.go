package citestore

import (
	"strings"

	"github.com/provgraph/provgraph/internal/model"
)

// DetectRelations recognises archive snapshots and AMP copies from the
// cited URL itself: a Wayback Machine URL names the live URL and the
// capture time, an AMP cache or viewer URL names the page it renders. The
// result is recorded as detected (not declared) relations. raw is the URL
// exactly as cited; parsed is its URL Standard href (lowercase host), or ""
// when the raw URL was rejected, in which case nothing is detected.
//
// The target is cut from the raw text, so it is exactly what the citation
// contained.
func DetectRelations(raw, parsed string) []model.Relation {
	if parsed == "" {
		return nil
	}
	host, path, ok := splitHref(parsed)
	if !ok {
		return nil
	}
	switch {
	case host == "web.archive.org" || host == "wayback.archive.org":
		// /web/<timestamp>[flags]/<target>
		ts, target, ok := afterPrefix(raw, "/web/")
		if !ok || !strings.HasPrefix(path, "/web/") {
			return nil
		}
		digits := leadingDigits(ts)
		if digits == "" || len(digits) > 14 {
			return nil
		}
		rel := model.Relation{Type: model.RelArchiveOf, Target: target}
		if len(digits) == 14 {
			rel.CapturedAt = digits[0:4] + "-" + digits[4:6] + "-" + digits[6:8] + "T" + digits[8:10] + ":" + digits[10:12] + ":" + digits[12:14] + "Z"
		}
		return []model.Relation{rel}
	case isArchiveToday(host):
		// /<timestamp>/<target>, /newest/<target>, /oldest/<target>; short
		// snapshot ids (/AbCdE) name no target and are not detected.
		ts, target, ok := afterPrefix(raw, "/")
		if !ok || !looksLikeURL(target) {
			return nil
		}
		rel := model.Relation{Type: model.RelArchiveOf, Target: target}
		if t, ok := archiveTodayTime(ts); ok {
			rel.CapturedAt = t
		} else if ts != "newest" && ts != "oldest" {
			return nil
		}
		return []model.Relation{rel}
	case strings.HasSuffix(host, ".cdn.ampproject.org"):
		// /c/s/<host/path> (https), /c/<host/path> (http); also /v/ and /i/.
		for _, p := range []string{"/c/", "/v/", "/i/"} {
			if strings.HasPrefix(path, p) {
				return ampTarget(raw, p)
			}
		}
	case host == "www.google.com" && strings.HasPrefix(path, "/amp/"):
		return ampTarget(raw, "/amp/")
	}
	return nil
}

// splitHref splits a special URL's href into host and the rest.
func splitHref(href string) (host, rest string, ok bool) {
	i := strings.Index(href, "://")
	if i < 0 {
		return "", "", false
	}
	s := href[i+3:]
	j := strings.IndexAny(s, "/?#")
	if j < 0 {
		return s, "", true
	}
	host = s[:j]
	if k := strings.LastIndexByte(host, '@'); k >= 0 {
		host = host[k+1:]
	}
	if k := strings.LastIndexByte(host, ':'); k >= 0 && !strings.HasSuffix(host, "]") {
		host = host[:k]
	}
	return host, s[j:], true
}

// afterPrefix finds, in the raw text after the authority, the path prefix
// p and returns the next path segment and everything after it.
func afterPrefix(raw, p string) (segment, rest string, ok bool) {
	i := strings.Index(raw, "://")
	if i < 0 {
		return "", "", false
	}
	s := raw[i+3:]
	j := strings.IndexByte(s, '/')
	if j < 0 || !strings.HasPrefix(s[j:], p) {
		return "", "", false
	}
	s = s[j+len(p):]
	k := strings.IndexByte(s, '/')
	if k < 0 || k+1 >= len(s) {
		return "", "", false
	}
	return s[:k], s[k+1:], true
}

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}

func isArchiveToday(host string) bool {
	switch host {
	case "archive.today", "archive.ph", "archive.is", "archive.li", "archive.vn", "archive.fo", "archive.md":
		return true
	}
	return false
}

// archiveTodayTime converts "2019.01.31-123456" or 14 digits to xsd:dateTime.
func archiveTodayTime(ts string) (string, bool) {
	var d string
	switch {
	case len(ts) == 17 && ts[4] == '.' && ts[7] == '.' && ts[10] == '-':
		d = ts[0:4] + ts[5:7] + ts[8:10] + ts[11:17]
	case len(ts) == 14:
		d = ts
	default:
		return "", false
	}
	if leadingDigits(d) != d {
		return "", false
	}
	return d[0:4] + "-" + d[4:6] + "-" + d[6:8] + "T" + d[8:10] + ":" + d[10:12] + ":" + d[12:14] + "Z", true
}

func looksLikeURL(s string) bool {
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http:/") || strings.HasPrefix(s, "https:/")
}

// ampTarget reads "<p>s/<host/path>" (https) or "<p><host/path>" (http)
// from the raw text.
func ampTarget(raw, p string) []model.Relation {
	i := strings.Index(raw, "://")
	if i < 0 {
		return nil
	}
	s := raw[i+3:]
	j := strings.IndexByte(s, '/')
	if j < 0 || !strings.HasPrefix(s[j:], p) {
		return nil
	}
	s = s[j+len(p):]
	scheme := "http://"
	if strings.HasPrefix(s, "s/") {
		scheme, s = "https://", s[2:]
	}
	if s == "" || s[0] == '/' {
		return nil
	}
	return []model.Relation{{Type: model.RelFormatOf, Target: scheme + s, Format: "amp"}}
}
