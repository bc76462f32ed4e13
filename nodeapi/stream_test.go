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
