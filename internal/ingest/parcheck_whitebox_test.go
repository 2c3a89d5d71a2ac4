package ingest

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestParallelCheckKeepsLineOrder: whatever the workers' pace, use sees
// every line in order with its own parse result, the first error of use
// ends the pass there (before an error of the reader after it), and long
// lines (past a chunk) arrive whole.
func TestParallelCheckKeepsLineOrder(t *testing.T) {
	errRead := errors.New("read error after the last line")
	for seed := range uint64(20) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		n := rnd.IntN(3*chunkLines) + 1
		lines := make([][]byte, n)
		for i := range lines {
			size := rnd.IntN(300)
			if rnd.IntN(500) == 0 {
				size = chunkBytes + rnd.IntN(1000) // longer than a chunk
			}
			lines[i] = append(fmt.Appendf(nil, "%d:", i+1), bytes.Repeat([]byte{'x'}, size)...)
		}
		stopAt := 0 // the line at which use fails; 0: none
		if seed%2 == 0 {
			stopAt = rnd.IntN(n) + 1
		}
		var seen []int
		p := newParallelCheck(func(lineNo int, line []byte) (string, string, error) {
			if !bytes.HasPrefix(line, fmt.Appendf(nil, "%d:", lineNo)) || len(line) != len(lines[lineNo-1]) {
				return "", "", fmt.Errorf("line %d parsed as %.20q", lineNo, line)
			}
			return fmt.Sprint(lineNo), fmt.Sprint(len(line)), nil
		}, func(l *parsedLine) error {
			if l.err != nil {
				return l.err
			}
			if l.id != fmt.Sprint(l.lineNo) || l.digest != fmt.Sprint(len(lines[l.lineNo-1])) {
				return fmt.Errorf("line %d has the result of %s", l.lineNo, l.id)
			}
			seen = append(seen, l.lineNo)
			if l.lineNo == stopAt {
				return fmt.Errorf("stop at %d", stopAt)
			}
			return nil
		})
		var err error
		for i, line := range lines {
			if err = p.add(i+1, line); err != nil {
				break
			}
		}
		if err == nil {
			err = errRead
		}
		err = p.finish(err)
		want := n
		wantErr := errRead.Error()
		if stopAt > 0 {
			want, wantErr = stopAt, fmt.Sprintf("stop at %d", stopAt)
		}
		if err == nil || err.Error() != wantErr {
			t.Errorf("seed %d: finish = %v, want %s", seed, err, wantErr)
		}
		if !slices.Equal(seen, seq(want)) {
			t.Errorf("seed %d: use saw %d lines (first %v), want lines 1 to %d in order", seed, len(seen), seen[:min(5, len(seen))], want)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i + 1
	}
	return s
}
