package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// testHoldEnv names the variable by which the process tests stop a command
// at a known point of its run, to kill it there instead of after a guessed
// delay. PROVGRAPH_TEST_HOLD=POINT:N holds the command the N-th time it
// reaches POINT: it prints "provgraph: test hold at POINT N" on standard
// error and waits until it is killed. The points are
//
//	ingest-batch  a batch of ingest's write pass has been committed
//	ingest-validate  ingest's validation pass checked for an interrupt
//	              (it does so at every line); this one holds until the
//	              command is interrupted (SIGINT, SIGTERM), then goes on
//	export-check  export checked whether it was interrupted (it does so
//	              every few thousand statements while it writes)
//	serve-decide  serve is about to write a decision's batch
//	serve-ingest-batch  a batch of an ingest through serve has been
//	              committed (serve then writes batches of 50 quads)
//	vacuum-commit  a transaction of vacuum's copy has been committed into
//	              the new file (the last one too, before the rename)
//
// Without the variable, or for another point, nothing is held. It is not
// a user feature and is not documented as one.
const testHoldEnv = "PROVGRAPH_TEST_HOLD"

// testHold returns the function a command calls each time it reaches
// point, or nil when PROVGRAPH_TEST_HOLD does not name that point.
func testHold(point string, stderr io.Writer) func() {
	name, count, ok := strings.Cut(os.Getenv(testHoldEnv), ":")
	n, err := strconv.ParseInt(count, 10, 64)
	if !ok || name != point || err != nil || n < 1 {
		return nil
	}
	var reached atomic.Int64
	return func() {
		if reached.Add(1) == n {
			fmt.Fprintf(stderr, "provgraph: test hold at %s %d\n", point, n)
			select {} // until killed
		}
	}
}

// holdContext calls hold each time its Err method is asked, so that a
// command can be held at one of its interruption checks.
type holdContext struct {
	context.Context
	hold func()
}

func (c holdContext) Err() error {
	c.hold()
	return c.Context.Err()
}

// testHoldUntilDone is testHold for a point where the command must still
// see an interrupt: it holds until ctx is done instead of until killed.
func testHoldUntilDone(ctx context.Context, point string, stderr io.Writer) func() {
	name, count, ok := strings.Cut(os.Getenv(testHoldEnv), ":")
	n, err := strconv.ParseInt(count, 10, 64)
	if !ok || name != point || err != nil || n < 1 {
		return nil
	}
	var reached atomic.Int64
	return func() {
		if reached.Add(1) == n {
			fmt.Fprintf(stderr, "provgraph: test hold at %s %d\n", point, n)
			<-ctx.Done()
		}
	}
}
