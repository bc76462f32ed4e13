package transcript

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestGetDataRecords checks the version 3 request kind: it round-trips,
// its block count is checked, it is refused in an older record version,
// and version 2 filter records still read beside it.
func TestGetDataRecords(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	var buf bytes.Buffer
	load := loadRecord(t)
	load.V = 2
	require.NoError(t, Write(&buf, load))
	req := Record{Seq: 1, Time: at, Peer: "127.0.0.1:1", Height: 120, Kind: KindGetData, Count: 500, Reason: "sync"}
	require.NoError(t, Write(&buf, req))
	got, err := Read(&buf)
	require.NoError(t, err)
	require.Len(t, got, 2, "got %+v", got)
	require.Equal(t, 2, got[0].V, "got %+v", got)
	require.Equal(t, KindGetData, got[1].Kind, "got %+v", got)
	require.Equal(t, int64(500), got[1].Count, "got %+v", got)
	require.Equal(t, int32(120), got[1].Height, "got %+v", got)
	require.Equal(t, 3, got[1].V, "got %+v", got)
	bad := []struct {
		name, line, want string
	}{
		{"getdata in version 2", `{"v":2,"seq":0,"time":"2023-11-14T22:13:20Z","peer":"p","height":5,"kind":"getdata","count":3}`, "version 2"},
		{"no blocks", `{"v":3,"seq":0,"time":"2023-11-14T22:13:20Z","peer":"p","height":5,"kind":"getdata"}`, "at least 1 block"},
		{"negative height", `{"v":3,"seq":0,"time":"2023-11-14T22:13:20Z","peer":"p","height":-1,"kind":"getdata","count":3}`, "at least 1 block"},
		{"count on a filterclear", `{"v":3,"seq":0,"time":"2023-11-14T22:13:20Z","peer":"p","height":5,"kind":"filterclear","count":3}`, "block count"},
		{"future version", `{"v":6,"seq":0,"time":"2023-11-14T22:13:20Z","peer":"p","height":5,"kind":"getdata","count":3}`, "reads up to 5"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.line + "\n"))
			require.ErrorIs(t, err, ErrBad, "err = %v, want %q", err, tc.want)
			require.Contains(t, err.Error(), tc.want, "err = %v, want %q", err, tc.want)
		})
	}
}
