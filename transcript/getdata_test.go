package transcript

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestGetDataRecords checks the version 3 request kind: it round-trips,
// its block count is checked, it is refused in an older record version,
// and version 2 filter records still read beside it.
func TestGetDataRecords(t *testing.T) {
	at := time.Unix(1700000000, 0).UTC()
	var buf bytes.Buffer
	load := loadRecord(t)
	load.V = 2
	if err := Write(&buf, load); err != nil {
		t.Fatal(err)
	}
	req := Record{Seq: 1, Time: at, Peer: "127.0.0.1:1", Height: 120, Kind: KindGetData, Count: 500, Reason: "sync"}
	if err := Write(&buf, req); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].V != 2 || got[1].Kind != KindGetData || got[1].Count != 500 || got[1].Height != 120 || got[1].V != 3 {
		t.Fatalf("got %+v", got)
	}
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
			if !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}
