package nodeapi

import (
	"bytes"
	"encoding/gob"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/privacy"
	"github.com/bloomwatch/bloomwatch/privacy/stats"
	"github.com/bloomwatch/bloomwatch/spv"
)

// TestStreamCarriesEveryEvent finds every event type of spv/events.go (a
// struct that embeds At) and requires the dashboard feed to carry it: a
// new event type left out of streamEvents fails here, not on a user's
// screen.
func TestStreamCarriesEveryEvent(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "../spv/events.go", nil, 0)
	require.NoError(t, err)
	var found []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok {
			return true
		}
		st, ok := ts.Type.(*ast.StructType)
		if !ok || len(st.Fields.List) == 0 {
			return true
		}
		if id, ok := st.Fields.List[0].Type.(*ast.Ident); ok && id.Name == "At" && len(st.Fields.List[0].Names) == 0 {
			found = append(found, "spv."+ts.Name.Name)
		}
		return true
	})
	require.NotEmpty(t, found)
	for _, name := range found {
		require.True(t, carried[name], "%s is an spv event the dashboard feed does not carry (add it to streamEvents)", name)
	}
	require.Len(t, carried, len(found))
}

// TestFramesRoundTrip encodes a frame of each carried event, and a
// SyncStopped's error, through gob.
func TestFramesRoundTrip(t *testing.T) {
	var b bytes.Buffer
	enc, dec := gob.NewEncoder(&b), gob.NewDecoder(&b)
	at := spv.At{Time: time.Unix(1_700_000_000, 0).UTC()}
	for _, ev := range streamEvents {
		require.NoError(t, enc.Encode(&Frame{Event: ev}), "%T", ev)
		var got Frame
		require.NoError(t, dec.Decode(&got), "%T", ev)
		require.Equal(t, kindOf(ev), kindOf(got.Event))
	}
	stopped := portable(spv.SyncStopped{At: at, Err: spv.ErrStopped})
	require.NoError(t, enc.Encode(&Frame{Event: stopped}))
	var got Frame
	require.NoError(t, dec.Decode(&got))
	require.EqualError(t, got.Event.(spv.SyncStopped).Err, spv.ErrStopped.Error())
	require.Nil(t, portable(notCarried{}))
}

// notCarried is an event type the feed does not carry.
type notCarried struct{ spv.At }

// TestStreamCarriesTheCFReading: a BIP158 block's compact-filter facts
// and a reading's CF, BIP37 alternative included, cross the feed whole;
// the stream sends a reading again when its CF changed though its record
// number did not (over BIP158 the meter reads no record), and not when
// nothing changed.
func TestStreamCarriesTheCFReading(t *testing.T) {
	var b bytes.Buffer
	enc, dec := gob.NewEncoder(&b), gob.NewDecoder(&b)
	at := spv.At{Time: time.Unix(1_700_000_000, 0).UTC()}
	bp := spv.BlockProcessed{At: at, Height: 7, Matched: 1, CF: &spv.CFBlock{FilterItems: 40, Queries: 6090, Fetched: true}}
	require.NoError(t, enc.Encode(&Frame{Event: bp}))
	var got Frame
	require.NoError(t, dec.Decode(&got))
	require.Equal(t, bp, got.Event)

	cf := &privacy.CFReading{FiltersFrom: 3, Scanned: 10, Fetched: 2, WalletBlocks: 1, FalsePositiveBlocks: 1,
		PerPeer: []privacy.PeerBlocks{{Peer: "127.0.0.1:18444", Blocks: 2}}, Queries: 6090, ExpectedFPBlocks: 0.07,
		FPBlocksCI: stats.PoissonInterval(1, stats.ConfidenceLevel),
		BIP37: &privacy.FilterAlternative{Bytes: 9792, HashFuncs: 13, Elements: 2034, FPRate: 8e-8, TxFPRate: 4e-7,
			Candidates: 742, ExpectedFP: 0.01, Precision: 0.99, Entropy: 0.1}}
	rd := &privacy.Reading{Seq: 4, WalletKnown: true, Members: 13, CF: cf}
	require.NoError(t, enc.Encode(&Frame{Reading: rd}))
	got = Frame{}
	require.NoError(t, dec.Decode(&got))
	require.Equal(t, rd.CF, got.Reading.CF)

	var g readingGate
	require.False(t, g.pass(nil))
	require.True(t, g.pass(rd))
	same := *rd
	same.CF = &privacy.CFReading{}
	*same.CF = *cf
	require.False(t, g.pass(&same), "nothing changed")
	grown := same
	grown.CF = &privacy.CFReading{}
	*grown.CF = *cf
	grown.CF.Scanned++
	require.True(t, g.pass(&grown), "a block scanned, the same record")
	next := grown
	next.Seq++
	require.True(t, g.pass(&next), "a new record")
}
