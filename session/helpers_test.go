package session_test

import (
	"bytes"
	"io"
	"testing"
)

// testWriter sends the session's log to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(bytes.TrimRight(p, "\n")))
	return len(p), nil
}

// bytesReader reads b.
func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }
