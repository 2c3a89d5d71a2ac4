package service

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/provgraph/provgraph/internal/graph"
)

// ServerInfo is what a server holding a database writes beside it
// (LockInfoPath), so that a command that finds the database locked can
// name the server instead of only saying "locked".
type ServerInfo struct {
	Addr string `json:"addr"` // the URL the server answers on
	PID  int    `json:"pid"`
}

// LockInfoPath is the file beside the database file db in which a server
// names itself: db + ".server".
func LockInfoPath(db string) string { return db + ".server" }

// WriteServerInfo writes info beside db; remove deletes it again when
// the server stops. A file left by a killed server is ignored once its
// process is gone.
func WriteServerInfo(db string, info ServerInfo) (remove func(), err error) {
	b, _ := json.Marshal(info)
	p := LockInfoPath(db)
	if err := os.WriteFile(p, append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("write server info: %w", err)
	}
	return func() { os.Remove(p) }, nil
}

// serverHolding returns the server that holds db, when a live process
// wrote its info beside it.
func serverHolding(db string) (ServerInfo, bool) {
	var info ServerInfo
	b, err := os.ReadFile(LockInfoPath(db))
	if err != nil || json.Unmarshal(b, &info) != nil || info.PID <= 0 {
		return info, false
	}
	if p, err := os.FindProcess(info.PID); err != nil || p.Signal(syscall.Signal(0)) != nil {
		return info, false
	}
	return info, true
}

// lockedByServer adds to a locked error the server that holds the file,
// when there is one.
func lockedByServer(path string, err error) error {
	if !errors.Is(err, graph.ErrLocked) {
		return err
	}
	if info, ok := serverHolding(path); ok {
		return fmt.Errorf("%w: provgraph serve (pid %d) holds it and answers at %s: use its API, or stop it first", err, info.PID, info.Addr)
	}
	return err
}
