package experiments

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// Find returns the experiment called name. For a name not in List it
// returns an error wrapping ErrUnknown that lists the known names.
func Find(name string) (Info, error) {
	names := make([]string, len(registry))
	for i, e := range registry {
		if e.Name == name {
			return e, nil
		}
		names[i] = e.Name
	}
	return Info{}, fmt.Errorf("%w: %q (want one of %s)", ErrUnknown, name, strings.Join(names, ", "))
}

// TranscriptName is the file name of the session's transcript in
// WriteTranscripts' directory: wallet-W-KIND-session-S.jsonl.
func (s *Session) TranscriptName() string {
	return fmt.Sprintf("wallet-%04d-%s-session-%02d.jsonl", s.Wallet, s.Kind, s.Index)
}

// WriteTranscripts writes one transcript file per session into dir,
// created when missing: TranscriptName, each record as the serving peer
// recorded it (transcript.Write), the file written whole or not at all
// (atomicfile) with permission perm. Transcripts written before an error
// are kept.
func WriteTranscripts(dir string, sessions []*Session, perm os.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range sessions {
		var b bytes.Buffer
		for _, r := range s.Records {
			if err := transcript.Write(&b, r); err != nil {
				return err
			}
		}
		if err := atomicfile.Write(filepath.Join(dir, s.TranscriptName()), b.Bytes(), perm); err != nil {
			return err
		}
	}
	return nil
}
