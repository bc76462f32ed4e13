package experiments

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/privacy/element"
	"github.com/bloomwatch/bloomwatch/privacy/replay"
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

// TestParseTranscriptName reads back every name TranscriptName makes and
// refuses other names.
func TestParseTranscriptName(t *testing.T) {
	for _, k := range Kinds {
		s := &Session{Wallet: 1234, Kind: k, Index: 7}
		w, kind, i, ok := ParseTranscriptName(filepath.Join("some", "dir", s.TranscriptName()))
		if !ok || w != 1234 || kind != k || i != 7 {
			t.Errorf("%s: %d %v %d %v", s.TranscriptName(), w, kind, i, ok)
		}
	}
	for _, bad := range []string{"transcript.jsonl", "wallet-0001-bitcoinj-like-session-01.json", "wallet-x-bloomwatch-session-01.jsonl",
		"wallet-0001-bloomwatch-session-.jsonl", "wallet-0001-electrum-session-01.jsonl", "wallet-0001-bloomwatch-01.jsonl",
		"wallet--0001-bloomwatch-session-01.jsonl", "wallet-0001-kind(9)-session-01.jsonl"} {
		if _, _, _, ok := ParseTranscriptName(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestCrawlerFilterIsFirstLoad: the filter CrawlerFilter reads from each
// session's transcript is the one Crawl tests (the session's first
// load), and a transcript without a filterload is refused.
func TestCrawlerFilterIsFirstLoad(t *testing.T) {
	pop, err := NewPopulation(PopulationConfig{Seed: 5, WalletsPerKind: 2, Blocks: 120})
	if err != nil {
		t.Fatal(err)
	}
	sessions, err := pop.Simulate(ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	reloaded := 0
	for _, s := range sessions {
		f, err := CrawlerFilter(s.Records)
		if err != nil {
			t.Fatalf("%s: %v", s.TranscriptName(), err)
		}
		if !bytes.Equal(f.Serialize(), s.Loads[0].Filter.Serialize()) {
			t.Errorf("%s: not the first load", s.TranscriptName())
		}
		if len(s.Loads) > 1 {
			reloaded++
		}
	}
	if reloaded == 0 {
		t.Error("no session reloads its filter: the test does not tell the first load from the last")
	}
	if _, err := CrawlerFilter(nil); !errors.Is(err, ErrNoFilterLoad) && !errors.Is(err, replay.ErrNoFilters) {
		t.Errorf("no filterload: %v", err)
	}
}

// TestWriteUniverse writes a population's chain candidates and reads
// them back as the crawler scans them.
func TestWriteUniverse(t *testing.T) {
	pop, err := NewPopulation(PopulationConfig{Seed: 5, WalletsPerKind: 1, Blocks: 40})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteUniverse(dir, pop, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, UniverseFileName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := element.ReadCandidates(f)
	want := pop.OnChainCandidates()
	if err != nil || len(got) != len(want) {
		t.Fatalf("read %d candidates, want %d: %v", len(got), len(want), err)
	}
	revealed := 0
	for i := range want {
		if !got[i].Equal(want[i]) || got[i].FirstSeen != want[i].FirstSeen {
			t.Fatalf("candidate %d: %v, want %v", i, got[i], want[i])
		}
		if len(want[i].Forms) == 2 {
			revealed++
		}
	}
	if revealed == 0 || revealed == len(want) {
		t.Errorf("%d of %d candidates with a revealed key: both kinds should be there", revealed, len(want))
	}
}
