package element

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
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
				require.ErrorIs(t, err, ErrBadElementFile, "err = %v, want ErrBadElementFile with %q", err, tc.wantLine)
				require.Contains(t, err.Error(), tc.wantLine, "err = %v, want ErrBadElementFile with %q", err, tc.wantLine)
				require.Nil(t, got, "returned %d candidates with the error", len(got))
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(tc.want), "got %d candidates, want %d", len(got), len(tc.want))
			var buf bytes.Buffer
			require.NoError(t, WriteCandidates(&buf, got))
			var wantText strings.Builder
			for _, c := range tc.want {
				wantText.WriteString(strings.Join(c, " ") + "\n")
			}
			require.Equal(t, wantText.String(), buf.String(), "round trip %q, want %q", buf.String(), wantText.String())
		})
	}
}

func TestReadCandidatesLineTooLong(t *testing.T) {
	in := strings.Repeat("a", maxElementLine+2) + "\n"
	_, err := ReadCandidates(strings.NewReader(in))
	require.ErrorIs(t, err, ErrBadElementFile, "err = %v, want ErrBadElementFile", err)
}

// TestTruthFileRoundTrip checks that a truth file reads back as its
// candidates (heights kept, the format line, header and address notes
// ignored), and that its first line names the format.
func TestTruthFileRoundTrip(t *testing.T) {
	cands := []Candidate{{Forms: [][]byte{{0xaa, 0xbb}}, FirstSeen: 440}, {Forms: [][]byte{{0xcc}}}}
	var b bytes.Buffer
	require.NoError(t, WriteTruthFile(&b, []string{"wallet /tmp/w: 2 used of 40", "two\nlines"}, cands, []string{"bcrt1qaddress", ""}))
	text := b.String()
	require.True(t, strings.HasPrefix(text, TruthFormat+"\n# wallet /tmp/w"), "truth file:\n%s", text)
	require.Contains(t, text, "aabb @440  # bcrt1qaddress\ncc\n", "truth file:\n%s", text)
	got, err := ReadCandidates(strings.NewReader(text))
	require.NoError(t, err, "read back %+v", got)
	require.Len(t, got, 2, "read back %+v, %v", got, err)
	require.True(t, got[0].Equal(cands[0]), "read back %+v, %v", got, err)
	require.True(t, got[1].Equal(cands[1]), "read back %+v, %v", got, err)
}
