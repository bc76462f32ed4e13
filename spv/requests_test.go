package spv

import (
	"errors"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/transcript"
	"github.com/bloomwatch/bloomwatch/watch/watchtest"
	"github.com/btcsuite/btcd/wire"
)

// readRecords reads the manager's transcript file.
func readRecords(t *testing.T, m *manager) []transcript.Record {
	t.Helper()
	recs, err := transcript.Read(openFile(t, m.n.cfg.DataDir+"/"+transcript.FileName))
	if err != nil {
		t.Fatal(err)
	}
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
	if m.synced.Height != 10 {
		t.Fatalf("synced to %d", m.synced.Height)
	}
	s.setChain(chain)
	inv := wire.NewMsgInv()
	h := chain[11].BlockHash()
	_ = inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
	s.deliver(inv)
	s.run()
	if m.synced.Height != 12 {
		t.Fatalf("synced to %d after the new blocks", m.synced.Height)
	}
	recs := readRecords(t, m)
	if recs[0].Kind != transcript.KindFilterLoad {
		t.Fatalf("first record %+v: the filter goes before any request", recs[0])
	}
	asked := map[int32]string{}
	total := 0
	for _, r := range recs {
		if r.Kind != transcript.KindGetData {
			continue
		}
		if r.V != 3 || r.Peer != "sim:1" || r.Count < 1 {
			t.Fatalf("getdata record %+v", r)
		}
		for h := r.Height; h < r.Height+int32(r.Count); h++ {
			if _, dup := asked[h]; dup {
				t.Fatalf("height %d recorded twice", h)
			}
			asked[h] = r.Reason
		}
		total += int(r.Count)
	}
	for h := int32(5); h <= 12; h++ {
		want := transcript.ReasonSync
		if h > 10 {
			want = transcript.ReasonLive
		}
		if asked[h] != want {
			t.Errorf("height %d: reason %q, want %q (records %+v)", h, asked[h], want, recs)
		}
	}
	if len(asked) != 8 || total != filteredAsked(s) {
		t.Fatalf("recorded %d heights (%d blocks), sent %d", len(asked), total, filteredAsked(s))
	}
	var published []transcript.Record
	deadline := time.After(5 * time.Second)
	for len(published) < len(recs)-1 { // every record but the filterload
		select {
		case ev := <-sub.Events():
			if br, ok := ev.(BlocksRequested); ok {
				published = append(published, br.Record)
			}
		case <-deadline:
			t.Fatalf("%d BlocksRequested events, want %d", len(published), len(recs)-1)
		}
	}
	for i, r := range published {
		if want := recs[i+1]; r.Seq != want.Seq || r.Height != want.Height || r.Count != want.Count || r.Reason != want.Reason || r.V != want.V {
			t.Errorf("event %d: %+v, want the record %+v", i, r, want)
		}
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
	if len(w.Txs()) != 2 {
		t.Fatalf("%d txs", len(w.Txs()))
	}
	refetched := 0
	for _, r := range readRecords(t, m) {
		if r.Kind == transcript.KindGetData && r.Peer == "other:1" && r.Reason == transcript.ReasonRefetch {
			refetched += int(r.Count)
		}
	}
	if refetched == 0 {
		t.Fatal("no refetch recorded for the blocks asked again from other:1")
	}
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
	if filteredAsked(s) != 0 {
		t.Fatalf("%d filtered blocks asked that the transcript does not hold", filteredAsked(s))
	}
	if !errors.Is(m.st.Err, ErrTranscriptWrite) {
		t.Fatalf("sync error %v, want ErrTranscriptWrite", m.st.Err)
	}
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
				if bm.Peer != "sim:1" || len(bm.Matched) != 1 {
					t.Fatalf("event %+v", bm)
				}
				got[bm.Height] = bm.Matched[0].String()
			}
		case <-deadline:
			t.Fatalf("BlockMatches for %v, want %v", got, want)
		}
	}
	for h, id := range want {
		if got[h] != id {
			t.Errorf("height %d: %s, want %s", h, got[h], id)
		}
	}
}
