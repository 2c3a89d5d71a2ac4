package ingest

import (
	"runtime"
	"sync"
)

// parsedLine is one line of the validation pass with what a worker made of
// it: the record's citation id and digest, or the error that rejects it.
type parsedLine struct {
	lineNo     int
	line       []byte
	id, digest string
	err        error
}

// lineChunk is a run of consecutive lines, parsed by one worker.
type lineChunk struct {
	lines []parsedLine
	buf   []byte        // the lines' bytes, copied from the reader's buffer
	done  chan struct{} // closed when every line is parsed
}

// Chunks are handed to the workers at about this size or line count.
const (
	chunkBytes = 1 << 20
	chunkLines = 2048
)

// parallelCheck parses the lines of the validation pass on every CPU while
// keeping its outcome that of one reader in line order: the workers parse
// chunks of lines (the costly part: decoding, validating, digesting), and
// one goroutine hands each line's result to use in line order, so that
// the first error by line stops the pass, the citation ids are checked in
// order and whatever use records is recorded as before. At most a few
// chunks per worker are in flight, so memory stays a few MiB.
type parallelCheck struct {
	parse func(lineNo int, line []byte) (id, digest string, err error)
	use   func(*parsedLine) error

	cur     *lineChunk
	work    chan *lineChunk // to the workers
	order   chan *lineChunk // to the user, in line order
	stopped chan struct{}   // closed when use returned an error
	err     error           // use's error, set before stopped is closed
	workers sync.WaitGroup
	used    chan struct{} // closed when the user goroutine ends
	pool    sync.Pool
}

func newParallelCheck(parse func(lineNo int, line []byte) (id, digest string, err error), use func(*parsedLine) error) *parallelCheck {
	n := max(1, runtime.GOMAXPROCS(0))
	p := &parallelCheck{
		parse:   parse,
		use:     use,
		work:    make(chan *lineChunk, n),
		order:   make(chan *lineChunk, 2*n+2),
		stopped: make(chan struct{}),
		used:    make(chan struct{}),
	}
	for range n {
		p.workers.Add(1)
		go func() {
			defer p.workers.Done()
			for c := range p.work {
				for i := range c.lines {
					l := &c.lines[i]
					l.id, l.digest, l.err = p.parse(l.lineNo, l.line)
				}
				close(c.done)
			}
		}()
	}
	go func() {
		defer close(p.used)
		for c := range p.order {
			<-c.done
			for i := range c.lines {
				if err := p.use(&c.lines[i]); err != nil {
					p.err = err
					close(p.stopped)
					return
				}
			}
			p.put(c)
		}
	}()
	return p
}

// add queues a line (it is copied); it returns the error that stopped the
// pass at an earlier line, if any, so that the reader stops too.
func (p *parallelCheck) add(lineNo int, line []byte) error {
	if c := p.cur; c != nil && (len(c.lines) == chunkLines || len(c.buf)+len(line) > cap(c.buf)) {
		if err := p.dispatch(); err != nil {
			return err
		}
	}
	if p.cur == nil {
		p.cur = p.get(len(line))
	}
	c := p.cur
	start := len(c.buf)
	c.buf = append(c.buf, line...)
	c.lines = append(c.lines, parsedLine{lineNo: lineNo, line: c.buf[start:len(c.buf):len(c.buf)]})
	return nil
}

// dispatch hands the current chunk to a worker and to the user.
func (p *parallelCheck) dispatch() error {
	c := p.cur
	p.cur = nil
	select {
	case p.order <- c:
	case <-p.stopped:
		return p.err
	}
	select {
	case p.work <- c:
	case <-p.stopped:
		return p.err
	}
	return nil
}

// finish uses the lines queued so far and ends the pass. readErr is the
// reader's own error, after its last line: an error of use at a line
// before it comes first.
func (p *parallelCheck) finish(readErr error) error {
	if p.cur != nil && len(p.cur.lines) > 0 {
		p.dispatch()
	}
	close(p.order)
	close(p.work)
	<-p.used
	p.workers.Wait()
	if p.err != nil {
		return p.err
	}
	return readErr
}

// get returns an empty chunk whose buffer holds at least n bytes.
func (p *parallelCheck) get(n int) *lineChunk {
	c, _ := p.pool.Get().(*lineChunk)
	if c == nil || cap(c.buf) < n {
		c = &lineChunk{buf: make([]byte, 0, max(n, chunkBytes)), lines: make([]parsedLine, 0, chunkLines)}
	}
	c.done = make(chan struct{})
	return c
}

// put returns a used chunk to the pool, without its lines' results.
func (p *parallelCheck) put(c *lineChunk) {
	if cap(c.buf) > chunkBytes {
		return // a chunk of one long line: let it go
	}
	clear(c.lines)
	c.lines, c.buf = c.lines[:0], c.buf[:0]
	p.pool.Put(c)
}
