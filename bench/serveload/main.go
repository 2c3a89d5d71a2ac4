// Command serveload measures provgraph serve on loopback: the first queue
// page, a group page, the stats, a walk through -walk pages of the queue
// (a page and a group of each, none asked for before), then -clients concurrent readers (the queue, group
// pages, stats-free API reads) for -duration, while -ingest FILE (JSON
// Lines) is posted to /api/ingest once at the start. It prints the
// latencies (first page, group page, p50/p99/max under load), the request
// count, the errors, and how long the ingest took.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:8080", "the server")
	clients := flag.Int("clients", 50, "concurrent clients")
	duration := flag.Duration("duration", 60*time.Second, "how long the clients run")
	ingest := flag.String("ingest", "", "JSON Lines file to POST to /api/ingest while the clients run")
	walk := flag.Int("walk", 20, "queue pages to walk through, following next, before the load: each a page and a group no reader asked for before")
	order := flag.String("sort", "risk", `the queue order asked for: risk, size, or "" for the groups' own order (the only one a bounded server answers)`)
	flag.Parse()
	c := &http.Client{Timeout: 2 * time.Minute}
	get := func(path string) (time.Duration, []byte, error) {
		t := time.Now()
		resp, err := c.Get(*base + path)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != 200 {
			err = fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return time.Since(t), b, err
	}
	d, _, err := get("/")
	check(err)
	fmt.Printf("first queue page (HTML)  %v\n", d.Round(time.Microsecond))
	queue := "/api/groups?limit=100"
	if *order != "" {
		queue += "&sort=" + *order
	}
	d, b, err := get(queue)
	check(err)
	fmt.Printf("first queue page (API)   %v\n", d.Round(time.Microsecond))
	var page struct {
		Groups []struct{ ID string }
		Next   string
	}
	check(json.Unmarshal(b, &page))
	if len(page.Groups) == 0 {
		check(fmt.Errorf("no group in the queue"))
	}
	var ids []string
	for _, g := range page.Groups {
		ids = append(ids, g.ID)
	}
	d, _, err = get("/groups/" + ids[0])
	check(err)
	fmt.Printf("group page (HTML)        %v\n", d.Round(time.Microsecond))
	d, _, err = get("/api/groups/" + ids[0])
	check(err)
	fmt.Printf("group (API)              %v\n", d.Round(time.Microsecond))
	d, _, err = get("/api/stats")
	check(err)
	fmt.Printf("stats (API)              %v\n", d.Round(time.Microsecond))
	// A reviewer's walk through the queue: pages and groups not computed
	// before (nothing cached serves them).
	var pageLat, groupLat []time.Duration
	next := page.Next
	for range *walk {
		if next == "" {
			break
		}
		d, b, err := get(queue + "&cursor=" + url.QueryEscape(next))
		check(err)
		pageLat = append(pageLat, d)
		var p struct {
			Groups []struct{ ID string }
			Next   string
		}
		check(json.Unmarshal(b, &p))
		next = p.Next
		if len(p.Groups) > 0 {
			d, _, err := get("/api/groups/" + p.Groups[len(p.Groups)/2].ID)
			check(err)
			groupLat = append(groupLat, d)
		}
	}
	if len(pageLat) > 0 {
		slices.Sort(pageLat)
		slices.Sort(groupLat)
		fmt.Printf("walk: %d pages of 100, p50 %v, max %v; a group of each, p50 %v, max %v\n", len(pageLat),
			pageLat[len(pageLat)/2].Round(time.Microsecond), pageLat[len(pageLat)-1].Round(time.Microsecond),
			groupLat[len(groupLat)/2].Round(time.Microsecond), groupLat[len(groupLat)-1].Round(time.Microsecond))
	}

	ingestDone := make(chan string, 1)
	if *ingest != "" {
		body, err := os.ReadFile(*ingest)
		check(err)
		go func() {
			t := time.Now()
			// No time limit: at a million citations the ingest outlasts
			// the readers' two minutes.
			resp, err := http.Post(*base+"/api/ingest", "application/x-ndjson", bytes.NewReader(body))
			if err != nil {
				ingestDone <- "ingest failed: " + err.Error()
				return
			}
			msg, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ingestDone <- fmt.Sprintf("ingest %s in %v: %.200s", resp.Status, time.Since(t).Round(time.Millisecond), bytes.TrimSpace(msg))
		}()
	}
	var mu sync.Mutex
	var lat []time.Duration
	// The latencies of each kind of request, in the order of paths below.
	kinds := []string{"queue (API)", "queue (HTML)", "group (API)", "group page (HTML)"}
	byKind := map[string][]time.Duration{}
	errs := 0
	stop := time.Now().Add(*duration)
	var wg sync.WaitGroup
	for i := range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths := []string{strings.Replace(queue, "limit=100", "limit=50", 1), "/", "/api/groups/" + ids[i%len(ids)], "/groups/" + ids[(i*7)%len(ids)]}
			for n := 0; time.Now().Before(stop); n++ {
				d, _, err := get(paths[n%len(paths)])
				mu.Lock()
				if err != nil {
					errs++
				} else {
					lat = append(lat, d)
					kind := kinds[n%len(paths)]
					byKind[kind] = append(byKind[kind], d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	quantile := func(lat []time.Duration, p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(float64(len(lat))*p))].Round(time.Microsecond)
	}
	slices.Sort(lat)
	q := func(p float64) time.Duration { return quantile(lat, p) }
	fmt.Printf("%d clients for %v: %d requests, %d errors, p50 %v, p99 %v, max %v\n", *clients, *duration, len(lat), errs, q(0.5), q(0.99), q(1))
	for _, k := range kinds {
		l := byKind[k]
		slices.Sort(l)
		fmt.Printf("  %-18s %6d requests, p50 %v, p99 %v, max %v\n", k, len(l), quantile(l, 0.5), quantile(l, 0.99), quantile(l, 1))
	}
	if *ingest != "" {
		fmt.Println(<-ingestDone)
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "serveload:", err)
		os.Exit(1)
	}
}
