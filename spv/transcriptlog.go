package spv

import (
	"errors"
	"fmt"

	"github.com/bloomwatch/bloomwatch/transcript"
)

// transcriptLog is where the node records every BIP37 message it sends,
// before it sends it: a transcript.File in the data dir. Tests put a
// failing one in its place.
type transcriptLog interface {
	Append(r transcript.Record) (transcript.Record, error)
	Close() error
}

var _ transcriptLog = (*transcript.File)(nil)

// openTranscriptLog opens the transcript of dir and returns it with the
// records earlier runs wrote (the adversary still holds those filters).
func openTranscriptLog(dir string) (transcriptLog, []transcript.Record, error) {
	f, recs, err := transcript.Open(dir)
	switch {
	case errors.Is(err, transcript.ErrTooLarge):
		return nil, nil, transcriptTooLarge(err)
	case err != nil:
		return nil, nil, fmt.Errorf("%w: %w", ErrCorruptTranscript, err)
	}
	return f, recs, nil
}

// transcriptTooLarge adds to the error of a transcript above
// transcript.MaxFileBytes what the user can do: nothing was read from it
// or written to it.
func transcriptTooLarge(err error) error {
	return fmt.Errorf("%w; move it aside to start a new one (the privacy meter then starts from nothing)", err)
}

// Transcript returns the records the transcript held when the node opened
// it (earlier runs' filters), oldest first. Records this run writes reach
// subscribers in FilterLoaded events; the file is never read again.
func (n *Node) Transcript() []transcript.Record {
	return append([]transcript.Record(nil), n.history...)
}
