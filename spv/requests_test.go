package spv

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
)

// readRecords reads the manager's transcript file.
func readRecords(t *testing.T, m *manager) []transcript.Record {
	t.Helper()
	recs, err := transcript.Read(openFile(t, m.n.cfg.DataDir+"/"+transcript.FileName))
	require.NoError(t, err)
	return recs
}

// filteredAsked counts the MSG_FILTERED_BLOCK entries of the getdata
// messages a sim peer was sent.
func filteredAsked(s *simServer) int {
	n := 0
	for _, msg := range s.sent {
		if gd, ok := msg.(*wire.MsgGetData); ok {
			for _, iv := range gd.InvList {
				if iv.Type == wire.InvTypeFilteredBlock {
					n++
				}
			}
		}
	}
	return n
}

// TestManagerTranscriptRecordsRequests: every filtered block the node
// asks for is in the transcript before the getdata goes out, as runs of
// consecutive heights (version 3 getdata records), with the reason: the
// initial sync from the birthday, then a live block once synced. Each
// record is published too (BlocksRequested), for the privacy meter.
func TestManagerTranscriptRecordsRequests(t *testing.T) {
	w := watchtest.NewMemWatcher(5, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	sub := n.Subscribe()
	defer sub.Cancel()
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 12, func(int) []*wire.MsgTx { return nil })
	s := addSimPeer(t, m, "sim:1", chain[:10], 0)
	s.run()
	require.Equal(t, int32(10), m.synced.Height, "synced to %d", m.synced.Height)
	s.setChain(chain)
	inv := wire.NewMsgInv()
	h := chain[11].BlockHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
	s.deliver(inv)
	s.run()
	require.Equal(t, int32(12), m.synced.Height, "synced to %d after the new blocks", m.synced.Height)
	recs := readRecords(t, m)
	require.Equal(t, transcript.KindFilterLoad, recs[0].Kind, "first record %+v: the filter goes before any request", recs[0])
	asked := map[int32]string{}
	total := 0
	for _, r := range recs {
		if r.Kind != transcript.KindGetData {
			continue
		}
		require.Equal(t, 3, r.V, "getdata record %+v", r)
		require.Equal(t, "sim:1", r.Peer, "getdata record %+v", r)
		require.GreaterOrEqual(t, r.Count, int64(1), "getdata record %+v", r)
		for h := r.Height; h < r.Height+int32(r.Count); h++ {
			_, dup := asked[h]
			require.False(t, dup, "height %d recorded twice", h)
			asked[h] = r.Reason
		}
		total += int(r.Count)
	}
	for h := int32(5); h <= 12; h++ {
		want := transcript.ReasonSync
		if h > 10 {
			want = transcript.ReasonLive
		}
		require.Equal(t, want, asked[h], "height %d: reason %q, want %q (records %+v)", h, asked[h], want, recs)
	}
	require.Len(t, asked, 8, "recorded %d heights (%d blocks), sent %d", len(asked), total, filteredAsked(s))
	require.Equal(t, filteredAsked(s), total, "recorded %d heights (%d blocks), sent %d", len(asked), total, filteredAsked(s))
	var published []transcript.Record
	deadline := time.After(5 * time.Second)
	for len(published) < len(recs)-1 { // every record but the filterload
		select {
		case ev := <-sub.Events():
			if br, ok := ev.(BlocksRequested); ok {
				published = append(published, br.Record)
			}
		case <-deadline:
			require.FailNow(t, fmt.Sprintf("%d BlocksRequested events, want %d", len(published), len(recs)-1))
		}
	}
	for i, r := range published {
		want := recs[i+1]
		require.Equal(t, want.Seq, r.Seq, "event %d: %+v, want the record %+v", i, r, want)
		require.Equal(t, want.Height, r.Height, "event %d: %+v, want the record %+v", i, r, want)
		require.Equal(t, want.Count, r.Count, "event %d: %+v, want the record %+v", i, r, want)
		require.Equal(t, want.Reason, r.Reason, "event %d: %+v, want the record %+v", i, r, want)
		require.Equal(t, want.V, r.V, "event %d: %+v, want the record %+v", i, r, want)
	}
}

// TestManagerTranscriptRecordsRefetch: a block a peer served without its
// transactions is asked from another peer, and the transcript says so.
func TestManagerTranscriptRecordsRefetch(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 2, func(i int) []*wire.MsgTx {
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	stingy := addSimPeer(t, m, "stingy:1", chain, 0)
	stingy.tamper = func(mb *wire.MsgMerkleBlock, _ []*wire.MsgTx) (*wire.MsgMerkleBlock, []*wire.MsgTx) {
		return mb, nil
	}
	other := addSimPeer(t, m, "other:1", chain, 1)
	for range 4 {
		stingy.run()
		other.run()
	}
	require.Len(t, w.Txs(), 2, "%d txs", len(w.Txs()))
	refetched := 0
	for _, r := range readRecords(t, m) {
		if r.Kind == transcript.KindGetData && r.Peer == "other:1" && r.Reason == transcript.ReasonRefetch {
			refetched += int(r.Count)
		}
	}
	require.NotEqual(t, 0, refetched, "no refetch recorded for the blocks asked again from other:1")
}

// failAfterLog writes its first ok records and fails after.
type failAfterLog struct {
	ok  int
	log transcriptLog
}

func (f *failAfterLog) Append(r transcript.Record) (transcript.Record, error) {
	if f.ok == 0 {
		return r, errors.New("no space left on device")
	}
	f.ok--
	return f.log.Append(r)
}
func (f *failAfterLog) Close() error { return f.log.Close() }

// TestRequestNotSentWhenTranscriptFails: a getdata the transcript cannot
// hold is not sent, and the sync stops.
func TestRequestNotSentWhenTranscriptFails(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	n.trans = &failAfterLog{ok: 1, log: n.trans} // the filterload only
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 3, func(int) []*wire.MsgTx { return nil })
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	require.Equal(t, 0, filteredAsked(s), "%d filtered blocks asked that the transcript does not hold", filteredAsked(s))
	require.ErrorIs(t, m.st.Err, ErrTranscriptWrite, "sync error %v, want ErrTranscriptWrite", m.st.Err)
}

// TestManagerPublishesBlockMatches: every merkleblock a peer serves with
// a match is published with the transactions its proof matched (what
// the peer knows it sent), for the privacy meter's behaviour attack.
func TestManagerPublishesBlockMatches(t *testing.T) {
	w := watchtest.NewMemWatcher(1, p2wpkh(1))
	n, m := newTestManager(t, w, Config{})
	sub := n.Subscribe()
	defer sub.Cancel()
	chain := mineBlocks(t, n.cfg.Network, genesis(n), 4, func(i int) []*wire.MsgTx {
		if i%2 == 1 {
			return nil
		}
		return []*wire.MsgTx{payTo(byte(i), 5, p2wpkh(1))}
	})
	s := addSimPeer(t, m, "sim:1", chain, 0)
	s.run()
	want := map[int32]string{}
	for i, b := range chain {
		if len(b.Transactions) > 1 {
			want[int32(i+1)] = b.Transactions[1].TxHash().String()
		}
	}
	got := map[int32]string{}
	deadline := time.After(5 * time.Second)
	for len(got) < len(want) {
		select {
		case ev := <-sub.Events():
			if bm, ok := ev.(BlockMatches); ok {
				require.Equal(t, "sim:1", bm.Peer, "event %+v", bm)
				require.Len(t, bm.Matched, 1, "event %+v", bm)
				got[bm.Height] = bm.Matched[0].String()
			}
		case <-deadline:
			require.FailNow(t, fmt.Sprintf("BlockMatches for %v, want %v", got, want))
		}
	}
	for h, id := range want {
		require.Equal(t, id, got[h], "height %d: %s, want %s", h, got[h], id)
	}
}
