package session

import (
	"path/filepath"

	"github.com/bloomwatch/bloomwatch/transcript"
)

// Names inside a wallet's data dir.
const (
	// NodeDir is the light node's directory inside the wallet's data
	// dir: the header store, the privacy transcript, the ban list and
	// the filter tweak live there.
	NodeDir = "spv"
	// LogFile is the log's name in the data dir while a dashboard owns
	// the terminal.
	LogFile = "bloomwatch.log"
)

// NodePath returns the light node's directory of the wallet in datadir.
func NodePath(datadir string) string { return filepath.Join(datadir, NodeDir) }

// TranscriptPath returns the privacy transcript of the wallet in datadir.
func TranscriptPath(datadir string) string {
	return filepath.Join(datadir, NodeDir, transcript.FileName)
}

// LogPath returns the default log file of the wallet in datadir.
func LogPath(datadir string) string { return filepath.Join(datadir, LogFile) }
