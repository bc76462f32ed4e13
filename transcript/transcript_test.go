package transcript

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/stretchr/testify/require"
)

// loadRecord returns a valid filterload record.
func loadRecord(t *testing.T) Record {
	t.Helper()
	f, err := bip37.NewFilter(10, 0.001, 7, bip37.UpdateAll)
	require.NoError(t, err)
	f.Add([]byte("element"))
	return Record{Time: time.Unix(1700000000, 0).UTC(), Peer: "127.0.0.1:1", Height: 5,
		Kind: KindFilterLoad, Filter: f.Serialize(), Reason: "initial"}
}

func TestReadVersionOneRecords(t *testing.T) {
	// A record as written before the version field existed.
	v1 := `{"seq":0,"time":"2026-11-23T10:00:00Z","peer":"127.0.0.1:1","height":3,"kind":"filterload","filter":"03614e9b050000000000000001","reason":"initial"}` + "\n" +
		`{"seq":1,"time":"2026-11-23T10:00:01Z","peer":"127.0.0.1:1","height":3,"kind":"filterclear"}` + "\n"
	recs, err := Read(strings.NewReader(v1))
	require.NoError(t, err)
	require.Len(t, recs, 2, "records %+v", recs)
	require.Equal(t, 0, recs[0].V, "records %+v", recs)
	require.Equal(t, KindFilterLoad, recs[0].Kind, "records %+v", recs)
	require.Equal(t, uint64(1), recs[1].Seq, "records %+v", recs)
}

func TestWriteReadRoundTrip(t *testing.T) {
	r := loadRecord(t)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, r))
	require.Contains(t, buf.String(), `"v":2`, "no version in %s", buf.String())
	got, err := Read(&buf)
	require.NoError(t, err)
	r.V = VersionFor(KindFilterLoad)
	require.Len(t, got, 1, "got %+v, want %+v", got, r)
	require.True(t, bytes.Equal(got[0].Filter, r.Filter), "got %+v, want %+v", got, r)
	require.Equal(t, VersionFor(KindFilterLoad), got[0].V, "got %+v, want %+v", got, r)
	require.True(t, got[0].Time.Equal(r.Time), "got %+v, want %+v", got, r)
}

func TestReadRefusesBadRecords(t *testing.T) {
	big := make([]byte, bip37.MaxFilterSize+1)
	over, _ := bip37.NewFilterFromBits(make([]byte, 8), 10, 0, bip37.UpdateNone)
	ser := over.Serialize()
	ser[len(ser)-9] = 51 // nHashFuncs (little-endian uint32 before tweak and flags)
	tooBig := append([]byte{0xfe, byte(len(big)), byte(len(big) >> 8), byte(len(big) >> 16), 0}, big...)
	tooBig = append(tooBig, 1, 0, 0, 0, 0, 0, 0, 0, 0)
	line := func(r Record) string {
		var b bytes.Buffer
		require.NoError(t, Write(&b, r))
		return b.String()
	}
	good := line(loadRecord(t))
	cases := []struct {
		name, in string
		line     int
	}{
		{"garbage", good + "not json\n", 2},
		{"truncated last record", good + good[:len(good)/2], 2},
		{"unknown kind", good + `{"seq":1,"kind":"filterzap"}` + "\n", 2},
		{"filterload without filter", `{"seq":0,"kind":"filterload"}` + "\n", 1},
		{"filter over 36,000 bytes", line(Record{Kind: KindFilterLoad, Filter: tooBig}), 1},
		{"over 50 hash functions", line(Record{Kind: KindFilterLoad, Filter: ser}), 1},
		{"filteradd over 520 bytes", line(Record{Kind: KindFilterAdd, Data: make([]byte, 521)}), 1},
		{"newer version", `{"v":99,"seq":0,"kind":"filterclear"}` + "\n", 1},
		{"bad hex", `{"seq":0,"kind":"filteradd","data":"zz"}` + "\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(c.in))
			var te *Error
			require.ErrorAs(t, err, &te, "err %v, want *Error wrapping ErrBad", err)
			require.ErrorIs(t, err, ErrBad, "err %v, want *Error wrapping ErrBad", err)
			require.Equal(t, c.line, te.Line, "line %d, want %d (%v)", te.Line, c.line, err)
			require.NotContains(t, err.Error(), "\n", "multi-line error %q", err)
		})
	}
}

func TestFileAppendsAndContinues(t *testing.T) {
	dir := t.TempDir()
	f, recs, err := Open(dir)
	require.NoError(t, err, "open: %v", recs)
	require.Len(t, recs, 0, "open: %v %v", recs, err)
	for i := range 3 {
		got, err := f.Append(loadRecord(t))
		require.NoError(t, err, "append %d: %+v", i, got)
		require.Equal(t, uint64(i), got.Seq, "append %d: %+v %v", i, got, err)
		require.Equal(t, VersionFor(KindFilterLoad), got.V, "append %d: %+v %v", i, got, err)
	}
	require.NoError(t, f.Close())
	_, err = f.Append(loadRecord(t))
	require.ErrorIs(t, err, ErrClosed, "append after close")
	// A crash mid-append leaves a torn tail: Open cuts it and goes on.
	path := filepath.Join(dir, FileName)
	raw, _ := os.ReadFile(path)
	require.NoError(t, os.WriteFile(path, append(raw, `{"seq":3,"ti`...), 0o600))
	f, recs, err = Open(dir)
	require.NoError(t, err, "reopen: %d records", len(recs))
	require.Len(t, recs, 3, "reopen: %d records, %v", len(recs), err)
	got, err := f.Append(loadRecord(t))
	require.NoError(t, err, "append after torn tail: %+v", got)
	require.Equal(t, uint64(3), got.Seq, "append after torn tail: %+v %v", got, err)
	_ = f.Close()
	raw, _ = os.ReadFile(path)
	_, err = Read(bytes.NewReader(raw))
	require.NoError(t, err, "file after repair")
}

func TestFileRefusesCorruptContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	bad := []byte("garbage line\n")
	require.NoError(t, os.WriteFile(path, bad, 0o600))
	_, _, err := Open(dir)
	require.ErrorIs(t, err, ErrBad, "open corrupt: %v", err)
	raw, _ := os.ReadFile(path)
	require.Equal(t, bad, raw, "corrupt transcript was modified")
}

func TestAppendRefusesInvalidRecord(t *testing.T) {
	f, _, err := Open(t.TempDir())
	require.NoError(t, err)
	defer f.Close()
	_, err = f.Append(Record{Kind: "bogus"})
	require.Error(t, err, "invalid record appended")
	got, err := f.Append(loadRecord(t))
	require.NoError(t, err, "sequence advanced by a refused record: %+v", got)
	require.Equal(t, uint64(0), got.Seq, "sequence advanced by a refused record: %+v %v", got, err)
}

func TestViaRoundTripAndOldRecords(t *testing.T) {
	var buf bytes.Buffer
	for _, via := range []string{ViaDirect, ViaProxy, ViaIsolated("bw1a2b3c4d-7"), ""} {
		r := loadRecord(t)
		r.Via = via
		require.NoError(t, Write(&buf, r))
	}
	require.Equal(t, 3, strings.Count(buf.String(), `"via"`), "via written %d times, want 3 (omitted when empty):\n%s", strings.Count(buf.String(), `"via"`), buf.String())
	got, err := Read(&buf)
	require.NoError(t, err)
	want := []string{ViaDirect, ViaProxy, "proxy:bw1a2b3c4d-7", ""}
	for i, r := range got {
		require.Equal(t, want[i], r.Via, "record %d via %q, want %q", i, r.Via, want[i])
	}
	id, ok := IsolationID(got[2].Via)
	require.True(t, ok, "IsolationID(%q) = %q, %v", got[2].Via, id, ok)
	require.Equal(t, "bw1a2b3c4d-7", id, "IsolationID(%q) = %q, %v", got[2].Via, id, ok)
	for _, via := range []string{ViaDirect, ViaProxy, "", "proxy:"} {
		id, ok := IsolationID(via)
		require.False(t, ok, "IsolationID(%q) = %q, true", via, id)
	}
	// A version 2 record written before the field existed reads as before.
	old := `{"v":2,"seq":0,"time":"2026-11-23T10:00:00Z","peer":"127.0.0.1:1","height":3,"kind":"filterload","filter":"03614e9b050000000000000001","reason":"initial"}` + "\n"
	recs, err := Read(strings.NewReader(old))
	require.NoError(t, err, "old record: %+v", recs)
	require.Len(t, recs, 1, "old record: %+v, %v", recs, err)
	require.Equal(t, "", recs[0].Via, "old record: %+v, %v", recs, err)
}

func TestReadRefusesBadVia(t *testing.T) {
	for _, via := range []string{"tor", "proxy:", "proxy:has space", "proxy:" + strings.Repeat("a", MaxIsolationID+1), "proxy:\x01"} {
		r := loadRecord(t)
		r.Via = via
		var b bytes.Buffer
		require.NoError(t, Write(&b, r))
		_, err := Read(&b)
		require.ErrorIs(t, err, ErrBad, "via %q: err %v, want ErrBad", via, err)
	}
	r := loadRecord(t)
	r.Via = ViaIsolated(strings.Repeat("a", MaxIsolationID))
	require.NoError(t, r.Validate(), "longest isolation id refused")
}

// TestBloomDecodedOnce: a filterload record that Read returned hands out
// one decoded filter, the same for every copy of the record; a record
// written with its sender's filter (WithBloom) keeps that filter through
// Append, which checks it against the bytes instead of decoding them and
// refuses one that is not theirs; a record built by hand decodes at each
// call.
func TestBloomDecodedOnce(t *testing.T) {
	r := loadRecord(t)
	var b bytes.Buffer
	require.NoError(t, Write(&b, r))
	recs, err := Read(&b)
	require.NoError(t, err)
	f1, err := recs[0].Bloom()
	require.NoError(t, err)
	cp := recs[0]
	f2, _ := cp.Bloom()
	require.Same(t, f1, f2, "a read record's copies do not share one decoded filter")
	require.True(t, bytes.Equal(f1.Serialize(), r.Filter), "a read record's copies do not share one decoded filter")
	a, _ := r.Bloom()
	require.NotNil(t, a, "a record built by hand does not decode")
	b2, _ := r.Bloom()
	require.NotSame(t, a, b2, "a record built by hand kept a decoded filter")

	tf, _, err := Open(t.TempDir())
	require.NoError(t, err)
	defer tf.Close()
	sent, err := bip37.Deserialize(r.Filter)
	require.NoError(t, err)
	w, err := tf.Append(r.WithBloom(sent))
	require.NoError(t, err)
	got, _ := w.Bloom()
	require.Same(t, sent, got, "Append did not keep the sender's filter")
	other := sent.Clone()
	other.Add([]byte("another element"))
	_, err = tf.Append(r.WithBloom(other))
	require.Error(t, err, "Append took a filter that is not the record's")
	_, err = (Record{Kind: KindGetData, Height: 1, Count: 1}).Bloom()
	require.Error(t, err, "a getdata record has a filter")
}

// TestHexBytesJSON: the plain hex string MarshalJSON writes decodes
// without a copy of the string; one with JSON escapes decodes too, the
// slow way; malformed hex and odd lengths are errors either way.
func TestHexBytesJSON(t *testing.T) {
	for in, want := range map[string]string{`"00ff10"`: "\x00\xff\x10", `""`: "", `"\u0030\u0031ab"`: "\x01\xab"} {
		var h HexBytes
		err := h.UnmarshalJSON([]byte(in))
		require.NoError(t, err, "%s: %x, %v; want %x", in, []byte(h), err, want)
		require.Equal(t, want, string(h), "%s: %x, %v; want %x", in, []byte(h), err, want)
	}
	for _, in := range []string{`"0g"`, `"abc"`, `"\u0030"`, `12`, `"00`} {
		var h HexBytes
		err := h.UnmarshalJSON([]byte(in))
		require.Error(t, err, "%s: decoded to %x", in, []byte(h))
	}
}

func TestOversizedTranscriptRefused(t *testing.T) {
	// A transcript above MaxFileBytes is refused before it is read, by
	// Open, ReadFile and Read of the file alike, with one line; the file
	// is left as it was. A stream that is no file is cut at the bound.
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(MaxFileBytes+1))
	_ = f.Close()
	_, _, err = Open(dir)
	require.ErrorIs(t, err, ErrTooLarge, "Open")
	require.NotContains(t, err.Error(), "\n", "Open: %v", err)
	_, _, err = ReadFile(path)
	require.ErrorIs(t, err, ErrTooLarge, "ReadFile")
	rf, err := os.Open(path)
	require.NoError(t, err)
	defer rf.Close()
	_, err = Read(rf)
	require.ErrorIs(t, err, ErrTooLarge, "Read: %v", err)
	fi, err := os.Stat(path)
	require.NoError(t, err, "file changed: %v", fi.Size())
	require.Equal(t, int64(MaxFileBytes+1), fi.Size(), "file changed: %v %v", fi.Size(), err)
	// Blank lines of 1 MiB each, past the bound.
	blank := strings.Repeat(" ", maxLine-1) + "\n"
	r := io.MultiReader(func() []io.Reader {
		var rs []io.Reader
		for range MaxFileBytes/len(blank) + 2 {
			rs = append(rs, strings.NewReader(blank))
		}
		return rs
	}()...)
	_, err = Read(r)
	require.ErrorIs(t, err, ErrTooLarge, "Read of a stream: %v", err)
}
