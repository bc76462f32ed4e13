package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

func TestFind(t *testing.T) {
	for _, e := range List() {
		got, err := Find(e.Name)
		if err != nil || got.Name != e.Name {
			t.Errorf("Find(%q) = %q, %v", e.Name, got.Name, err)
		}
	}
	_, err := Find("nosuch")
	if !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), `unknown experiment: "nosuch" (want one of bitcoinj-sizing, `) ||
		!strings.Contains(err.Error(), PopulationName) {
		t.Errorf("Find(nosuch) = %v", err)
	}
}

// TestWriteTranscripts writes two sessions' transcripts into a directory
// it creates and reads them back.
func TestWriteTranscripts(t *testing.T) {
	f, err := bip37.NewFilter(10, 0.001, 7, bip37.UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	recs := []transcript.Record{
		{Seq: 1, Time: at, Peer: "peer", Height: 10, Kind: transcript.KindFilterLoad, Filter: f.Serialize()},
		{Seq: 2, Time: at, Peer: "peer", Height: 11, Kind: transcript.KindFilterAdd, Data: []byte{1, 2, 3}},
	}
	sessions := []*Session{
		{Wallet: 3, Kind: WalletKind(0), Index: 0, Records: recs},
		{Wallet: 12, Kind: WalletKind(1), Index: 4, Records: recs[:1]},
	}
	dir := filepath.Join(t.TempDir(), "sub", "transcripts")
	if err := WriteTranscripts(dir, sessions, 0o600); err != nil {
		t.Fatal(err)
	}
	es, err := os.ReadDir(dir)
	if err != nil || len(es) != len(sessions) {
		t.Fatalf("entries %v %v", es, err)
	}
	for _, s := range sessions {
		name := s.TranscriptName()
		if !strings.HasPrefix(name, "wallet-") || !strings.HasSuffix(name, ".jsonl") {
			t.Errorf("name %q", name)
		}
		file, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		got, err := transcript.Read(file)
		_ = file.Close()
		if err != nil || len(got) != len(s.Records) || got[0].Seq != 1 || got[0].Kind != transcript.KindFilterLoad {
			t.Errorf("%s: read %d records %v", name, len(got), err)
		}
	}
	if got := sessions[0].TranscriptName(); got != "wallet-0003-"+WalletKind(0).String()+"-session-00.jsonl" {
		t.Errorf("name %q", got)
	}
}
