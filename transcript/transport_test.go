package transcript

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTransportRecords checks version 4: a record that names its
// transport (and wire length) is written as version 4, one that does not
// keeps its kind's version, both read back side by side with the records
// of versions 1 to 3, and the fields are refused where they do not
// belong.
func TestTransportRecords(t *testing.T) {
	plain := loadRecord(t)
	v2 := loadRecord(t)
	v2.Seq, v2.Transport, v2.Wire = 1, TransportV2, 4096
	req := Record{Seq: 2, Peer: "127.0.0.1:1", Height: 7, Kind: KindGetData, Count: 3, Transport: TransportV1}
	old := `{"seq":3,"time":"2026-11-23T10:00:00Z","peer":"127.0.0.1:1","height":3,"kind":"filterload","filter":"03614e9b050000000000000001","reason":"initial"}` + "\n"
	var buf bytes.Buffer
	for _, r := range []Record{plain, v2, req} {
		require.NoError(t, Write(&buf, r))
	}
	buf.WriteString(old)
	got, err := Read(&buf)
	require.NoError(t, err)
	want := []struct {
		v         int
		transport string
		wire      int
	}{{2, "", 0}, {4, TransportV2, 4096}, {4, TransportV1, 0}, {0, "", 0}}
	require.Len(t, got, len(want), "%d records, want %d", len(got), len(want))
	for i, w := range want {
		require.Equal(t, w.v, got[i].V, "record %d: v %d transport %q wire %d, want %+v", i, got[i].V, got[i].Transport, got[i].Wire, w)
		require.Equal(t, w.transport, got[i].Transport, "record %d: v %d transport %q wire %d, want %+v", i, got[i].V, got[i].Transport, got[i].Wire, w)
		require.Equal(t, w.wire, got[i].Wire, "record %d: v %d transport %q wire %d, want %+v", i, got[i].V, got[i].Transport, got[i].Wire, w)
	}
	require.Equal(t, 2, VersionOf(plain), "VersionOf: %d %d %d, want 2 4 4", VersionOf(plain), VersionOf(v2), VersionOf(req))
	require.Equal(t, 4, VersionOf(v2), "VersionOf: %d %d %d, want 2 4 4", VersionOf(plain), VersionOf(v2), VersionOf(req))
	require.Equal(t, 4, VersionOf(req), "VersionOf: %d %d %d, want 2 4 4", VersionOf(plain), VersionOf(v2), VersionOf(req))

	f, _, err := Open(t.TempDir())
	require.NoError(t, err)
	defer f.Close()
	r, err := f.Append(v2)
	require.NoError(t, err, "append: v %d", r.V)
	require.Equal(t, 4, r.V, "append: v %d, %v", r.V, err)
	r, err = f.Append(plain)
	require.NoError(t, err, "append: v %d", r.V)
	require.Equal(t, 2, r.V, "append: v %d, %v", r.V, err)

	bad := []struct {
		name, line, want string
	}{
		{"transport in version 3", `{"v":3,"seq":0,"peer":"p","height":5,"kind":"filterclear","transport":"v2"}`, "version 3"},
		{"unknown transport", `{"v":4,"seq":0,"peer":"p","height":5,"kind":"filterclear","transport":"v3"}`, "unknown transport"},
		{"negative wire", `{"v":4,"seq":0,"peer":"p","height":5,"kind":"filterclear","transport":"v2","wire":-1}`, "wire length"},
		{"wire without transport", `{"v":4,"seq":0,"peer":"p","height":5,"kind":"filterclear","wire":30}`, "without a transport"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.line + "\n"))
			require.ErrorIs(t, err, ErrBad, "err = %v, want %q", err, tc.want)
			require.Contains(t, err.Error(), tc.want, "err = %v, want %q", err, tc.want)
		})
	}
}
