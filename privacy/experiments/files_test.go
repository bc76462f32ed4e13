package experiments

import (
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
	"github.com/stretchr/testify/require"
)

func TestFind(t *testing.T) {
	for _, e := range List() {
		got, err := Find(e.Name)
		require.NoError(t, err, "Find(%q) = %q", e.Name, got.Name)
		require.Equal(t, e.Name, got.Name, "Find(%q) = %q, %v", e.Name, got.Name, err)
	}
	_, err := Find("nosuch")
	require.ErrorIs(t, err, ErrUnknown, "Find(nosuch) = %v", err)
	require.Contains(t, err.Error(), `unknown experiment: "nosuch" (want one of bitcoinj-sizing, `, "Find(nosuch) = %v", err)
	require.Contains(t, err.Error(), PopulationName, "Find(nosuch) = %v", err)
}

// TestWriteTranscripts writes two sessions' transcripts into a directory
// it creates and reads them back.
func TestWriteTranscripts(t *testing.T) {
	f, err := bip37.NewFilter(10, 0.001, 7, bip37.UpdateAll)
	require.NoError(t, err)
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
	require.NoError(t, WriteTranscripts(dir, sessions, 0o600))
	es, err := os.ReadDir(dir)
	require.NoError(t, err, "entries %v", es)
	require.Len(t, es, len(sessions), "entries %v %v", es, err)
	for _, s := range sessions {
		name := s.TranscriptName()
		require.True(t, strings.HasPrefix(name, "wallet-"), "name %q", name)
		require.True(t, strings.HasSuffix(name, ".jsonl"), "name %q", name)
		file, err := os.Open(filepath.Join(dir, name))
		require.NoError(t, err)
		got, err := transcript.Read(file)
		_ = file.Close()
		require.NoError(t, err, "%s: read %d records", name, len(got))
		require.Len(t, got, len(s.Records), "%s: read %d records %v", name, len(got), err)
		require.Equal(t, uint64(1), got[0].Seq, "%s: read %d records %v", name, len(got), err)
		require.Equal(t, transcript.KindFilterLoad, got[0].Kind, "%s: read %d records %v", name, len(got), err)
	}
	got := sessions[0].TranscriptName()
	require.Equal(t, "wallet-0003-"+WalletKind(0).String()+"-session-00.jsonl", got, "name %q", got)
}

// TestParseTranscriptName reads back every name TranscriptName makes and
// refuses other names.
func TestParseTranscriptName(t *testing.T) {
	for _, k := range Kinds {
		s := &Session{Wallet: 1234, Kind: k, Index: 7}
		w, kind, i, ok := ParseTranscriptName(filepath.Join("some", "dir", s.TranscriptName()))
		require.True(t, ok, "%s: %d %v %d %v", s.TranscriptName(), w, kind, i, ok)
		require.Equal(t, 1234, w, "%s: %d %v %d %v", s.TranscriptName(), w, kind, i, ok)
		require.Equal(t, k, kind, "%s: %d %v %d %v", s.TranscriptName(), w, kind, i, ok)
		require.Equal(t, 7, i, "%s: %d %v %d %v", s.TranscriptName(), w, kind, i, ok)
	}
	for _, bad := range []string{"transcript.jsonl", "wallet-0001-bitcoinj-like-session-01.json", "wallet-x-bloomwatch-session-01.jsonl",
		"wallet-0001-bloomwatch-session-.jsonl", "wallet-0001-electrum-session-01.jsonl", "wallet-0001-bloomwatch-01.jsonl",
		"wallet--0001-bloomwatch-session-01.jsonl", "wallet-0001-kind(9)-session-01.jsonl"} {
		_, _, _, ok := ParseTranscriptName(bad)
		require.False(t, ok, "%q parsed", bad)
	}
}

// TestCrawlerFilterIsFirstLoad: the filter CrawlerFilter reads from each
// session's transcript is the one Crawl tests (the session's first
// load), and a transcript without a filterload is refused.
func TestCrawlerFilterIsFirstLoad(t *testing.T) {
	pop, err := NewPopulation(PopulationConfig{Seed: 5, WalletsPerKind: 2, Blocks: 120})
	require.NoError(t, err)
	sessions, err := pop.Simulate(ClientOptions{})
	require.NoError(t, err)
	reloaded := 0
	for _, s := range sessions {
		f, err := CrawlerFilter(s.Records)
		require.NoError(t, err, "%s", s.TranscriptName())
		require.Equal(t, s.Loads[0].Filter.Serialize(), f.Serialize(), "%s: not the first load", s.TranscriptName())
		if len(s.Loads) > 1 {
			reloaded++
		}
	}
	require.NotEqual(t, 0, reloaded, "no session reloads its filter: the test does not tell the first load from the last")
	_, err = CrawlerFilter(nil)
	require.False(t, !errors.Is(err, ErrNoFilterLoad) && !errors.Is(err, replay.ErrNoFilters), "no filterload: %v", err)
}

// TestWriteUniverse writes a population's chain candidates and reads
// them back as the crawler scans them.
func TestWriteUniverse(t *testing.T) {
	pop, err := NewPopulation(PopulationConfig{Seed: 5, WalletsPerKind: 1, Blocks: 40})
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, WriteUniverse(dir, pop, 0o600))
	f, err := os.Open(filepath.Join(dir, UniverseFileName))
	require.NoError(t, err)
	defer f.Close()
	got, err := element.ReadCandidates(f)
	want := pop.OnChainCandidates()
	require.NoError(t, err, "read %d candidates, want %d", len(got), len(want))
	require.Len(t, got, len(want), "read %d candidates, want %d: %v", len(got), len(want), err)
	revealed := 0
	for i := range want {
		require.True(t, got[i].Equal(want[i]), "candidate %d: %v, want %v", i, got[i], want[i])
		require.Equal(t, want[i].FirstSeen, got[i].FirstSeen, "candidate %d: %v, want %v", i, got[i], want[i])
		if len(want[i].Forms) == 2 {
			revealed++
		}
	}
	require.NotEqual(t, 0, revealed, "%d of %d candidates with a revealed key: both kinds should be there", revealed, len(want))
	require.NotEqual(t, len(want), revealed, "%d of %d candidates with a revealed key: both kinds should be there", revealed, len(want))
}
