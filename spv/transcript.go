package spv

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/bloomwatch/bloomwatch/privacy"
)

// TranscriptFile is the name of the privacy transcript in the data dir:
// one privacy.Record per JSON line, appended, for every filterload,
// filteradd and filterclear the node sends to any peer.
const TranscriptFile = "transcript.jsonl"

// transcript appends records to the transcript file. Records are rare
// (one per filter sent), so each is written straight to the file and
// fsync'd; close syncs again.
type transcript struct {
	mu   sync.Mutex
	f    *os.File
	next uint64
	path string
}

// openTranscript opens (or creates) the transcript in dir. A torn last line
// (a crash mid-append) is cut off; any other malformed content is an
// ErrCorruptTranscript error and nothing is written. Sequence numbers
// continue after the last record.
func openTranscript(dir string) (*transcript, error) {
	path := filepath.Join(dir, TranscriptFile)
	raw, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	keep := len(raw)
	if i := bytes.LastIndexByte(raw, '\n'); i+1 < len(raw) {
		keep = i + 1 // torn tail: cut after the last complete line
	}
	recs, err := privacy.ReadTranscript(bytes.NewReader(raw[:keep]))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorruptTranscript, path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, stateFileMode)
	if err != nil {
		return nil, fmt.Errorf("open transcript: %w", err)
	}
	if keep < len(raw) {
		if err := f.Truncate(int64(keep)); err != nil {
			_ = f.Close()
			return nil, fmt.Errorf("cut torn transcript tail: %w", err)
		}
	}
	if _, err := f.Seek(int64(keep), 0); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("seek transcript: %w", err)
	}
	t := &transcript{f: f, path: path}
	if n := len(recs); n > 0 {
		t.next = recs[n-1].Seq + 1
	}
	return t, nil
}

// write assigns the next sequence number to r, appends it and syncs.
func (t *transcript) write(r privacy.Record) (privacy.Record, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return r, fmt.Errorf("transcript: %w", ErrStopped)
	}
	r.Seq = t.next
	if err := privacy.WriteRecord(t.f, r); err != nil {
		return r, err
	}
	t.next++
	if err := t.f.Sync(); err != nil {
		return r, fmt.Errorf("sync transcript: %w", err)
	}
	return r, nil
}

// close syncs and closes the file; it is idempotent.
func (t *transcript) close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return nil
	}
	f := t.f
	t.f = nil
	serr := f.Sync()
	cerr := f.Close()
	if serr != nil {
		return fmt.Errorf("sync transcript: %w", serr)
	}
	if cerr != nil {
		return fmt.Errorf("close transcript: %w", cerr)
	}
	return nil
}
