package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/provgraph/provgraph/internal/graph"
	"github.com/provgraph/provgraph/internal/store"
)

// Kind is the class of an error: what the front end tells its caller.
type Kind int

// The kinds of error, from Classify.
const (
	OK          Kind = iota // no error
	Internal                // an I/O or internal error stopped the request
	Usage                   // the request is wrong: a flag, an argument, a policy file or name, a base URL
	Rejected                // the input data was rejected, in whole or in part, or names no citation
	Locked                  // another process holds the database
	Damaged                 // the database is inconsistent or damaged
	Interrupted             // the request was cancelled (Ctrl-C, SIGTERM, a closed connection)
)

var kindNames = [...]string{"ok", "internal", "usage", "rejected", "locked", "damaged", "interrupted"}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// HTTPStatus is the status an HTTP handler answers an error of kind k
// with: the request's fault is 4xx, the server's 5xx. A locked database is
// 503 (try again later); an interrupted request has gone, 499 is nginx's
// "client closed request" for the log.
func (k Kind) HTTPStatus() int {
	switch k {
	case OK:
		return http.StatusOK
	case Usage:
		return http.StatusBadRequest
	case Rejected:
		return http.StatusUnprocessableEntity
	case Locked:
		return http.StatusServiceUnavailable
	case Interrupted:
		return 499
	default:
		return http.StatusInternalServerError
	}
}

// Classify returns the kind of err. It is the one place where errors are
// classified; cmd/provgraph's exit-code switch and HTTP handlers map its
// kinds. An error that is none of the marked ones is Internal.
func Classify(err error) Kind {
	var ue UsageError
	var ie InputError
	var ir InterruptError
	switch {
	case err == nil:
		return OK
	case errors.As(err, &ir):
		return Interrupted
	case errors.Is(err, ErrRejected), errors.As(err, &ie):
		return Rejected
	case errors.Is(err, graph.ErrLocked):
		return Locked
	case errors.Is(err, graph.ErrCorrupt), errors.Is(err, store.ErrDamaged):
		return Damaged
	case errors.As(err, &ue):
		return Usage
	default:
		return Internal
	}
}

// UsageError marks an error as the caller's to fix (Usage).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with the message of fmt.Errorf.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// InputError marks an error in the caller's input data (Rejected).
type InputError struct{ Err error }

func (e InputError) Error() string { return e.Err.Error() }
func (e InputError) Unwrap() error { return e.Err }

// ErrRejected reports that a request finished but rejected some inputs,
// and that it has already said which (Rejected, with nothing more to say).
var ErrRejected = errors.New("some inputs were rejected")

// InterruptError is the error of a request stopped by the cancellation of
// its context. Said is set by a request whose front end has already told
// where it stopped and what was kept (ingest, resolve, normalize); it then
// adds nothing, and otherwise says "interrupted" instead of the internal
// "context canceled".
type InterruptError struct {
	Err  error
	Said bool
}

func (e InterruptError) Error() string { return e.Err.Error() }
func (e InterruptError) Unwrap() error { return e.Err }

// IsInterrupt reports whether err is the cancellation of ctx: its error
// or its cause (signal.NotifyContext's "interrupt signal received").
func IsInterrupt(ctx context.Context, err error) bool {
	return err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.Cause(ctx)))
}
