package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/internal/atomicfile"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
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

// ParseTranscriptName reads the wallet, kind and session index from a
// file name TranscriptName made (a path's directory is ignored); ok is
// false for any other name.
func ParseTranscriptName(name string) (wallet int, kind WalletKind, index int, ok bool) {
	rest, found := strings.CutPrefix(filepath.Base(name), "wallet-")
	if !found {
		return 0, 0, 0, false
	}
	if rest, found = strings.CutSuffix(rest, ".jsonl"); !found {
		return 0, 0, 0, false
	}
	w, rest, found := strings.Cut(rest, "-")
	if !found {
		return 0, 0, 0, false
	}
	cut := strings.LastIndex(rest, "-session-")
	if cut < 0 {
		return 0, 0, 0, false
	}
	kindName, idx := rest[:cut], rest[cut+len("-session-"):]
	wallet, errW := strconv.Atoi(w)
	index, errI := strconv.Atoi(idx)
	if errW != nil || errI != nil || wallet < 0 || index < 0 {
		return 0, 0, 0, false
	}
	for _, k := range Kinds {
		if k.String() == kindName {
			return wallet, k, index, true
		}
	}
	return 0, 0, 0, false
}

// ErrNoFilterLoad is returned by CrawlerFilter for a transcript without
// a filterload.
var ErrNoFilterLoad = errors.New("transcript holds no filterload")

// CrawlerFilter returns the filter a crawler keeps of a session's
// transcript: its first filterload, as loaded (Nick's crawlers
// disconnected after it). It is the filter Crawl tests for the session.
// A malformed filter fails with the privacy replay's error.
func CrawlerFilter(records []transcript.Record) (*bip37.Filter, error) {
	tl, err := replay.Replay(records)
	if err != nil {
		return nil, err
	}
	for _, e := range tl.Events {
		if e.Record.Kind == transcript.KindFilterLoad && e.State >= 0 {
			return tl.States[e.State], nil
		}
	}
	return nil, ErrNoFilterLoad
}

// UniverseFileName is the name of the element file WriteUniverse writes
// beside the transcripts.
const UniverseFileName = "universe.elements"

// WriteUniverse writes the population's on-chain candidates
// (OnChainCandidates: every key paid on chain, its hash160 and the public
// key a spend revealed, with its first-seen height) to dir/UniverseFileName
// as an element file, the universe the population experiment's crawler
// scans before its synthetic background, written whole or not at all.
func WriteUniverse(dir string, p *Population, perm os.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b bytes.Buffer
	if err := element.WriteCandidates(&b, p.OnChainCandidates()); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, UniverseFileName), b.Bytes(), perm)
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
