package server_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/provgraph/provgraph/internal/server"
	"github.com/provgraph/provgraph/internal/testenv"
)

// screenshotsEnv names a directory to write the UI's screenshots to
// (PROVGRAPH_SCREENSHOTS=../../docs rewrites the README's); without it they
// go to the test's temporary directory.
const screenshotsEnv = "PROVGRAPH_SCREENSHOTS"

// TestBrowser drives the web UI in Debian's chromium: open the queue, open
// the current group with Enter, record a decision with the keyboard (s),
// see it and its history, and see the lineage picture; then decide a pair
// of its members and one of its relations from the group page with the
// keyboard (p, Space, d; b, u).
func TestBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		testenv.MissingTool(t, "chromium is not installed (apt-get install chromium)")
	}
	st := open(t)
	ts := start(t, st, server.Options{})
	shots := os.Getenv(screenshotsEnv)
	if shots == "" {
		shots = t.TempDir()
	}
	profile := browserProfile(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1360, 900),
	}
	// The deadline only ends a hung browser; every step waits for an
	// element, never for time.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var queue, group []byte
	var state, history, decided, svgNodes, firstGroup string
	err = chromedp.Run(bctx,
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible("#queue tr.row.current", chromedp.ByQuery),
		chromedp.Text("#queue tr.row.current td a", &firstGroup, chromedp.ByQuery),
		chromedp.FullScreenshot(&queue, 100),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible("#decide-form", chromedp.ByQuery),
		chromedp.SendKeys("#reviewer", "alice", chromedp.ByQuery),
		chromedp.KeyEvent(kb.Escape),
		chromedp.KeyEvent("s"),
		chromedp.WaitVisible("#decided", chromedp.ByQuery),
		chromedp.Text("#decided", &decided, chromedp.ByQuery),
		chromedp.Text("#review-state", &state, chromedp.ByQuery),
		chromedp.Text("#history", &history, chromedp.ByQuery),
		chromedp.FullScreenshot(&group, 100),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.HasPrefix(firstGroup, "g-") || !strings.Contains(decided, "recorded") || state != "decided" || !strings.Contains(history, "same by alice") {
		t.Errorf("after deciding with the keyboard on %s: notice %q, state %q, history %q", firstGroup, decided, state, history)
	}
	var member string
	err = chromedp.Run(bctx,
		chromedp.AttributeValue(".member h3 a", "href", &member, nil, chromedp.ByQuery),
		chromedp.Click(".member h3 a", chromedp.ByQuery),
		chromedp.WaitVisible("#lineage-picture svg", chromedp.ByQuery),
		chromedp.Evaluate(`String(document.querySelectorAll("#lineage-picture svg g.node").length) + " " + String(document.querySelectorAll("#lineage-picture svg g.decision").length)`, &svgNodes),
	)
	if err != nil {
		t.Fatalf("browser, lineage: %v", err)
	}
	var nodes, decisions int
	if _, err := fmt.Sscan(svgNodes, &nodes, &decisions); err != nil || nodes < 4 || decisions != 1 {
		t.Errorf("lineage picture of %s: %s nodes and decisions, want at least 4 nodes and 1 decision", member, svgNodes)
	}
	// Back on the group: tick its two members with the keyboard (p, Space)
	// and decide the pair (d), then decide the first relation (b, u); the
	// page lists both under its subjects and the group's own latest
	// decision stays the one recorded above.
	var pair, both, stateAfter, historyAfter string
	err = chromedp.Run(bctx,
		chromedp.Navigate(ts.URL+"/groups/"+firstGroup),
		chromedp.WaitVisible("#pair-form", chromedp.ByQuery),
		chromedp.KeyEvent("p"), chromedp.KeyEvent(" "),
		chromedp.KeyEvent("p"), chromedp.KeyEvent(" "),
		chromedp.KeyEvent("d"),
		chromedp.WaitVisible("#subjects li span.state", chromedp.ByQuery),
		chromedp.Text("#subjects", &pair, chromedp.ByQuery),
		chromedp.KeyEvent("b"),
		chromedp.KeyEvent("u"),
		chromedp.WaitVisible("#subjects li:nth-child(2) span.state", chromedp.ByQuery),
		chromedp.Text("#subjects", &both, chromedp.ByQuery),
		chromedp.Text("#review-state", &stateAfter, chromedp.ByQuery),
		chromedp.Text("#history", &historyAfter, chromedp.ByQuery),
		chromedp.FullScreenshot(&group, 100),
	)
	if err != nil {
		t.Fatalf("browser, pair and relation: %v", err)
	}
	if !strings.Contains(pair, "pair") || !strings.Contains(pair, "different by alice") {
		t.Errorf("subjects after deciding a pair from the page: %q", pair)
	}
	if !strings.Contains(both, "relation "+firstGroup+" → g-") || !strings.Contains(both, "unsure by alice") || !strings.Contains(both, "different by alice") {
		t.Errorf("subjects after deciding a relation from the page: %q", both)
	}
	if stateAfter != "decided" || historyAfter != history {
		t.Errorf("the group's own state and history changed with the pair and relation decisions: %q, %q (before %q)", stateAfter, historyAfter, history)
	}
	for name, png := range map[string][]byte{"review-queue.png": queue, "review-group.png": group} {
		if len(png) < 1000 {
			t.Errorf("screenshot %s: %d bytes", name, len(png))
		}
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// browserProfile is a directory for Chromium's profile, removed when the
// test ends. Not t.TempDir: Chromium's helper processes (crash handler,
// utility processes) outlive the browser process that the allocator waits
// for by a moment and still write into the profile, so that a single
// RemoveAll can meet a file created after it read a directory and fail
// the test ("directory not empty"). The removal is tried again until it
// succeeds, for at most ten seconds.
func browserProfile(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "provgraph-browser-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for {
			err := os.RemoveAll(dir)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("removing the browser profile: %v", err)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	return dir
}
