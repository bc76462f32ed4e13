package transcript

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// FileName is the transcript's name in a light node's data dir.
const FileName = "transcript.jsonl"

// fileMode is the transcript's permission: it describes the wallet.
const fileMode = 0o600

// ErrClosed is returned by Append after Close.
var ErrClosed = errors.New("transcript closed")

// File is an open transcript that records are appended to, each written
// and fsync'd before Append returns, so a caller that sends a message only
// after Append succeeded never sends one that is not on disk.
type File struct {
	mu   sync.Mutex
	f    *os.File
	next uint64
	off  int64 // bytes of whole records: where the next one starts
	path string
}

// Open opens (or creates) the transcript in dir and returns it with the
// records it already holds. A torn last line (a crash mid-append) is cut
// off; any other malformed content is an error wrapping ErrBad, and the
// file is left as it was. Sequence numbers continue after the last record.
func Open(dir string) (*File, []Record, error) {
	path := filepath.Join(dir, FileName)
	recs, keep, err := ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrBad) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("read transcript: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, fileMode)
	if err != nil {
		return nil, nil, fmt.Errorf("open transcript: %w", err)
	}
	if fi, err := f.Stat(); err == nil && keep < fi.Size() {
		if err := f.Truncate(keep); err != nil {
			_ = f.Close()
			return nil, nil, fmt.Errorf("cut torn transcript tail: %w", err)
		}
	}
	if _, err := f.Seek(keep, 0); err != nil {
		_ = f.Close()
		return nil, nil, fmt.Errorf("seek transcript: %w", err)
	}
	t := &File{f: f, path: path, off: keep}
	if n := len(recs); n > 0 {
		t.next = recs[n-1].Seq + 1
	}
	return t, recs, nil
}

// Path returns the file's path.
func (t *File) Path() string { return t.path }

// Append assigns the next sequence number (and VersionOf r) to r,
// appends it and, for a filter record, syncs the file to disk. It returns
// the record as written. On error nothing may be assumed recorded: the
// caller must not send the message. A getdata record is written but not
// synced on its own (an omission check asks one block at a time: a sync
// per block would cost more than the check): the next filter record's
// sync, or Close, makes it durable, so a crash can lose the requests
// since the last filter, never a filter.
func (t *File) Append(r Record) (Record, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.f == nil {
		return r, ErrClosed
	}
	r.Seq, r.V = t.next, VersionOf(r)
	if err := r.check(); err != nil {
		return r, fmt.Errorf("transcript record: %w", err)
	}
	err := Write(t.f, r)
	if err == nil && r.Kind != KindGetData && !r.Kind.BIP158() {
		if err = t.f.Sync(); err != nil {
			err = fmt.Errorf("sync transcript: %w", err)
		}
	}
	if err != nil {
		// Cut whatever part of the line reached the file, so the next
		// record starts on a line of its own and no sequence number is
		// used twice.
		if terr := t.f.Truncate(t.off); terr == nil {
			_, _ = t.f.Seek(t.off, 0)
		}
		return r, err
	}
	end, err := t.f.Seek(0, 1)
	if err != nil {
		return r, fmt.Errorf("transcript offset: %w", err)
	}
	t.off = end
	t.next++
	return r, nil
}

// Close syncs and closes the file; it is idempotent.
func (t *File) Close() error {
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
