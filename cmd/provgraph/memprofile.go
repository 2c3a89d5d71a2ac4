package main

import (
	"bytes"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// peakProfile keeps the heap profile taken when the live heap was largest,
// for PROVGRAPH_MEMPROFILE: a profile written at exit shows what is left
// at the end, not what made the peak. It samples the live heap (as of the
// last collection, which is also when the profile's in-use figures were
// counted) every 50 ms and takes a new profile whenever the live heap has
// grown a tenth past the one kept.
type peakProfile struct {
	stop chan struct{}
	done chan struct{}
	buf  bytes.Buffer
}

func startPeakProfile() *peakProfile {
	p := &peakProfile{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var kept uint64
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > kept+kept/10 {
				kept = v
				p.buf.Reset()
				_ = pprof.Lookup("heap").WriteTo(&p.buf, 0)
			}
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return p
}

// write stops sampling and writes the profile kept to path.
func (p *peakProfile) write(path string) error {
	close(p.stop)
	<-p.done
	return os.WriteFile(path, p.buf.Bytes(), 0o644)
}
