package transcript

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// loadRecord returns a valid filterload record.
func loadRecord(t *testing.T) Record {
	t.Helper()
	f, err := bip37.NewFilter(10, 0.001, 7, bip37.UpdateAll)
	if err != nil {
		t.Fatal(err)
	}
	f.Add([]byte("element"))
	return Record{Time: time.Unix(1700000000, 0).UTC(), Peer: "127.0.0.1:1", Height: 5,
		Kind: KindFilterLoad, Filter: f.Serialize(), Reason: "initial"}
}

func TestReadVersionOneRecords(t *testing.T) {
	// A record as written before the version field existed.
	v1 := `{"seq":0,"time":"2026-11-23T10:00:00Z","peer":"127.0.0.1:1","height":3,"kind":"filterload","filter":"03614e9b050000000000000001","reason":"initial"}` + "\n" +
		`{"seq":1,"time":"2026-11-23T10:00:01Z","peer":"127.0.0.1:1","height":3,"kind":"filterclear"}` + "\n"
	recs, err := Read(strings.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].V != 0 || recs[0].Kind != KindFilterLoad || recs[1].Seq != 1 {
		t.Fatalf("records %+v", recs)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	r := loadRecord(t)
	var buf bytes.Buffer
	if err := Write(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"v":2`) {
		t.Fatalf("no version in %s", buf.String())
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r.V = VersionFor(KindFilterLoad)
	if len(got) != 1 || !bytes.Equal(got[0].Filter, r.Filter) || got[0].V != VersionFor(KindFilterLoad) || !got[0].Time.Equal(r.Time) {
		t.Fatalf("got %+v, want %+v", got, r)
	}
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
		if err := Write(&b, r); err != nil {
			t.Fatal(err)
		}
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
			if !errors.As(err, &te) || !errors.Is(err, ErrBad) {
				t.Fatalf("err %v, want *Error wrapping ErrBad", err)
			}
			if te.Line != c.line {
				t.Fatalf("line %d, want %d (%v)", te.Line, c.line, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
		})
	}
}

func TestFileAppendsAndContinues(t *testing.T) {
	dir := t.TempDir()
	f, recs, err := Open(dir)
	if err != nil || len(recs) != 0 {
		t.Fatalf("open: %v %v", recs, err)
	}
	for i := range 3 {
		got, err := f.Append(loadRecord(t))
		if err != nil || got.Seq != uint64(i) || got.V != VersionFor(KindFilterLoad) {
			t.Fatalf("append %d: %+v %v", i, got, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Append(loadRecord(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	// A crash mid-append leaves a torn tail: Open cuts it and goes on.
	path := filepath.Join(dir, FileName)
	raw, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(raw, `{"seq":3,"ti`...), 0o600); err != nil {
		t.Fatal(err)
	}
	f, recs, err = Open(dir)
	if err != nil || len(recs) != 3 {
		t.Fatalf("reopen: %d records, %v", len(recs), err)
	}
	got, err := f.Append(loadRecord(t))
	if err != nil || got.Seq != 3 {
		t.Fatalf("append after torn tail: %+v %v", got, err)
	}
	_ = f.Close()
	raw, _ = os.ReadFile(path)
	if _, err := Read(bytes.NewReader(raw)); err != nil {
		t.Fatalf("file after repair: %v", err)
	}
}

func TestFileRefusesCorruptContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	bad := []byte("garbage line\n")
	if err := os.WriteFile(path, bad, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(dir); !errors.Is(err, ErrBad) {
		t.Fatalf("open corrupt: %v", err)
	}
	if raw, _ := os.ReadFile(path); !bytes.Equal(raw, bad) {
		t.Fatal("corrupt transcript was modified")
	}
}

func TestAppendRefusesInvalidRecord(t *testing.T) {
	f, _, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Append(Record{Kind: "bogus"}); err == nil {
		t.Fatal("invalid record appended")
	}
	got, err := f.Append(loadRecord(t))
	if err != nil || got.Seq != 0 {
		t.Fatalf("sequence advanced by a refused record: %+v %v", got, err)
	}
}

func TestViaRoundTripAndOldRecords(t *testing.T) {
	var buf bytes.Buffer
	for _, via := range []string{ViaDirect, ViaProxy, ViaIsolated("bw1a2b3c4d-7"), ""} {
		r := loadRecord(t)
		r.Via = via
		if err := Write(&buf, r); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Count(buf.String(), `"via"`) != 3 {
		t.Fatalf("via written %d times, want 3 (omitted when empty):\n%s", strings.Count(buf.String(), `"via"`), buf.String())
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{ViaDirect, ViaProxy, "proxy:bw1a2b3c4d-7", ""}
	for i, r := range got {
		if r.Via != want[i] {
			t.Errorf("record %d via %q, want %q", i, r.Via, want[i])
		}
	}
	if id, ok := IsolationID(got[2].Via); !ok || id != "bw1a2b3c4d-7" {
		t.Errorf("IsolationID(%q) = %q, %v", got[2].Via, id, ok)
	}
	for _, via := range []string{ViaDirect, ViaProxy, "", "proxy:"} {
		if id, ok := IsolationID(via); ok {
			t.Errorf("IsolationID(%q) = %q, true", via, id)
		}
	}
	// A version 2 record written before the field existed reads as before.
	old := `{"v":2,"seq":0,"time":"2026-11-23T10:00:00Z","peer":"127.0.0.1:1","height":3,"kind":"filterload","filter":"03614e9b050000000000000001","reason":"initial"}` + "\n"
	recs, err := Read(strings.NewReader(old))
	if err != nil || len(recs) != 1 || recs[0].Via != "" {
		t.Fatalf("old record: %+v, %v", recs, err)
	}
}

func TestReadRefusesBadVia(t *testing.T) {
	for _, via := range []string{"tor", "proxy:", "proxy:has space", "proxy:" + strings.Repeat("a", MaxIsolationID+1), "proxy:\x01"} {
		r := loadRecord(t)
		r.Via = via
		var b bytes.Buffer
		if err := Write(&b, r); err != nil {
			t.Fatal(err)
		}
		if _, err := Read(&b); !errors.Is(err, ErrBad) {
			t.Errorf("via %q: err %v, want ErrBad", via, err)
		}
	}
	r := loadRecord(t)
	r.Via = ViaIsolated(strings.Repeat("a", MaxIsolationID))
	if err := r.Validate(); err != nil {
		t.Errorf("longest isolation id refused: %v", err)
	}
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
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	recs, err := Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	f1, err := recs[0].Bloom()
	if err != nil {
		t.Fatal(err)
	}
	cp := recs[0]
	if f2, _ := cp.Bloom(); f2 != f1 || !bytes.Equal(f1.Serialize(), r.Filter) {
		t.Fatal("a read record's copies do not share one decoded filter")
	}
	if a, _ := r.Bloom(); a == nil {
		t.Fatal("a record built by hand does not decode")
	} else if b2, _ := r.Bloom(); a == b2 {
		t.Fatal("a record built by hand kept a decoded filter")
	}

	tf, _, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	sent, err := bip37.Deserialize(r.Filter)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tf.Append(r.WithBloom(sent))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := w.Bloom(); got != sent {
		t.Fatal("Append did not keep the sender's filter")
	}
	other := sent.Clone()
	other.Add([]byte("another element"))
	if _, err := tf.Append(r.WithBloom(other)); err == nil {
		t.Fatal("Append took a filter that is not the record's")
	}
	if _, err := (Record{Kind: KindGetData, Height: 1, Count: 1}).Bloom(); err == nil {
		t.Fatal("a getdata record has a filter")
	}
}

// TestHexBytesJSON: the plain hex string MarshalJSON writes decodes
// without a copy of the string; one with JSON escapes decodes too, the
// slow way; malformed hex and odd lengths are errors either way.
func TestHexBytesJSON(t *testing.T) {
	for in, want := range map[string]string{`"00ff10"`: "\x00\xff\x10", `""`: "", `"\u0030\u0031ab"`: "\x01\xab"} {
		var h HexBytes
		if err := h.UnmarshalJSON([]byte(in)); err != nil || string(h) != want {
			t.Errorf("%s: %x, %v; want %x", in, []byte(h), err, want)
		}
	}
	for _, in := range []string{`"0g"`, `"abc"`, `"\u0030"`, `12`, `"00`} {
		var h HexBytes
		if err := h.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("%s: decoded to %x", in, []byte(h))
		}
	}
}

func TestOversizedTranscriptRefused(t *testing.T) {
	// A transcript above MaxFileBytes is refused before it is read, by
	// Open, ReadFile and Read of the file alike, with one line; the file
	// is left as it was. A stream that is no file is cut at the bound.
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	_ = f.Close()
	if _, _, err := Open(dir); !errors.Is(err, ErrTooLarge) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("Open: %v", err)
	}
	if _, _, err := ReadFile(path); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadFile: %v", err)
	}
	rf, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rf.Close()
	if _, err := Read(rf); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read: %v", err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() != MaxFileBytes+1 {
		t.Fatalf("file changed: %v %v", fi.Size(), err)
	}
	// Blank lines of 1 MiB each, past the bound.
	blank := strings.Repeat(" ", maxLine-1) + "\n"
	r := io.MultiReader(func() []io.Reader {
		var rs []io.Reader
		for range MaxFileBytes/len(blank) + 2 {
			rs = append(rs, strings.NewReader(blank))
		}
		return rs
	}()...)
	if _, err := Read(r); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Read of a stream: %v", err)
	}
}
