package element

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestReadCandidates(t *testing.T) {
	long := strings.Repeat("ab", MaxFormSize+1)
	tests := []struct {
		name     string
		in       string
		want     [][]string // forms in hex per candidate
		wantLine string     // substring of the error, when it must fail
	}{
		{name: "empty", in: "", want: nil},
		{name: "comments and blanks", in: "# universe\n\n  \t\n# end\n", want: nil},
		{name: "one form", in: "00112233\n", want: [][]string{{"00112233"}}},
		{name: "two forms, trailing comment", in: "aa bb # hash then key\ncc\n", want: [][]string{{"aa", "bb"}, {"cc"}}},
		{name: "tabs and CRLF", in: "aa\tbb\r\ncc\r\n", want: [][]string{{"aa", "bb"}, {"cc"}}},
		{name: "no final newline", in: "aa\ndd", want: [][]string{{"aa"}, {"dd"}}},
		{name: "uppercase hex", in: "AABB\n", want: [][]string{{"aabb"}}},
		{name: "first-seen height", in: "aa bb @120\ncc @0\n", want: [][]string{{"aa", "bb", "@120"}, {"cc"}}},
		{name: "bad height", in: "aa @x\n", wantLine: "line 1: first-seen height"},
		{name: "negative height", in: "aa @-1\n", wantLine: "line 1: first-seen height"},
		{name: "height alone", in: "@5\n", wantLine: "line 1: first-seen height without a form"},
		{name: "odd hex", in: "aa\nabc\n", wantLine: "line 2: form 1"},
		{name: "not hex", in: "zz\n", wantLine: "line 1: form 1"},
		{name: "second form bad", in: "aa 0g\n", wantLine: "line 1: form 2"},
		{name: "too long", in: long + "\n", wantLine: "line 1: form 1: 521 bytes"},
		{name: "too many forms", in: strings.Repeat("aa ", MaxFormsPerLine+1) + "\n", wantLine: "line 1: 9 forms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReadCandidates(strings.NewReader(tc.in))
			if tc.wantLine != "" {
				if !errors.Is(err, ErrBadElementFile) || !strings.Contains(err.Error(), tc.wantLine) {
					t.Fatalf("err = %v, want ErrBadElementFile with %q", err, tc.wantLine)
				}
				if got != nil {
					t.Errorf("returned %d candidates with the error", len(got))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d candidates, want %d", len(got), len(tc.want))
			}
			var buf bytes.Buffer
			if err := WriteCandidates(&buf, got); err != nil {
				t.Fatal(err)
			}
			var wantText strings.Builder
			for _, c := range tc.want {
				wantText.WriteString(strings.Join(c, " ") + "\n")
			}
			if buf.String() != wantText.String() {
				t.Errorf("round trip %q, want %q", buf.String(), wantText.String())
			}
		})
	}
}

func TestReadCandidatesLineTooLong(t *testing.T) {
	in := strings.Repeat("a", maxElementLine+2) + "\n"
	if _, err := ReadCandidates(strings.NewReader(in)); !errors.Is(err, ErrBadElementFile) {
		t.Fatalf("err = %v, want ErrBadElementFile", err)
	}
}

// TestTruthFileRoundTrip checks that a truth file reads back as its
// candidates (heights kept, the format line, header and address notes
// ignored), and that its first line names the format.
func TestTruthFileRoundTrip(t *testing.T) {
	cands := []Candidate{{Forms: [][]byte{{0xaa, 0xbb}}, FirstSeen: 440}, {Forms: [][]byte{{0xcc}}}}
	var b bytes.Buffer
	if err := WriteTruthFile(&b, []string{"wallet /tmp/w: 2 used of 40", "two\nlines"}, cands, []string{"bcrt1qaddress", ""}); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	if !strings.HasPrefix(text, TruthFormat+"\n# wallet /tmp/w") || !strings.Contains(text, "aabb @440  # bcrt1qaddress\ncc\n") {
		t.Errorf("truth file:\n%s", text)
	}
	got, err := ReadCandidates(strings.NewReader(text))
	if err != nil || len(got) != 2 || !got[0].Equal(cands[0]) || !got[1].Equal(cands[1]) {
		t.Errorf("read back %+v, %v", got, err)
	}
}
