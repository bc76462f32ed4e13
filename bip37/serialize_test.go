package bip37

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// serialized builds a filterload payload from raw parts, so tests can make
// payloads the encoder would never produce.
func serialized(prefix []byte, data []byte, hashFuncs, tweak uint32, flags byte, extra ...byte) []byte {
	out := append([]byte(nil), prefix...)
	out = append(out, data...)
	out = binary.LittleEndian.AppendUint32(out, hashFuncs)
	out = binary.LittleEndian.AppendUint32(out, tweak)
	out = append(out, flags)
	return append(out, extra...)
}

// TestDeserialize covers valid payloads and every rejection.
func TestDeserialize(t *testing.T) {
	big := make([]byte, MaxFilterSize)
	tooBig := make([]byte, MaxFilterSize+1)
	tests := []struct {
		name    string
		in      []byte
		wantErr error
	}{
		{"core vector", mustHex(t, "03614e9b050000000000000001"), nil},
		{"empty filter", serialized([]byte{0}, nil, 0, 0, 0), nil},
		{"unknown flags kept", serialized([]byte{1}, []byte{0x80}, 1, 5, 0xfe), nil},
		{"max size", serialized([]byte{0xfd, 0xa0, 0x8c}, big, MaxHashFuncs, 0, 1), nil},
		{"nothing", nil, ErrMalformedFilter},
		{"truncated prefix", []byte{0xfd, 0x01}, ErrMalformedFilter},
		{"truncated data", mustHex(t, "03614e"), ErrMalformedFilter},
		{"truncated trailer", mustHex(t, "03614e9b0500000000000000"), ErrMalformedFilter},
		{"trailing byte", mustHex(t, "03614e9b05000000000000000100"), ErrTrailingBytes},
		{"non-canonical fd", serialized([]byte{0xfd, 0x03, 0x00}, []byte{1, 2, 3}, 1, 0, 0), ErrMalformedFilter},
		{"non-canonical fe", serialized([]byte{0xfe, 0x03, 0x00, 0x00, 0x00}, []byte{1, 2, 3}, 1, 0, 0), ErrMalformedFilter},
		{"non-canonical ff", serialized([]byte{0xff, 3, 0, 0, 0, 0, 0, 0, 0}, []byte{1, 2, 3}, 1, 0, 0), ErrMalformedFilter},
		{"huge length", []byte{0xff, 0, 0, 0, 0, 1, 0, 0, 0}, ErrFilterTooLarge},
		{"oversized", serialized([]byte{0xfd, 0xa1, 0x8c}, tooBig, 1, 0, 0), ErrFilterTooLarge},
		{"too many hash funcs", serialized([]byte{1}, []byte{0}, MaxHashFuncs+1, 0, 0), ErrTooManyHashFuncs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Deserialize(tc.in)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || f != nil {
					t.Fatalf("Deserialize = %v, %v; want %v", f, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := f.Serialize(); !bytes.Equal(got, tc.in) {
				t.Errorf("round trip: %x, want %x", got, tc.in)
			}
			var buf bytes.Buffer
			if err := f.MsgFilterLoad().BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), tc.in) {
				t.Errorf("wire encoding %x, want %x", buf.Bytes(), tc.in)
			}
		})
	}
}

// TestLoadFilter checks the caps a node applies to filterload and that
// MsgFilterLoad round trips exactly.
func TestLoadFilter(t *testing.T) {
	tests := []struct {
		name    string
		msg     *wire.MsgFilterLoad
		wantErr error
	}{
		{"core vector", wire.NewMsgFilterLoad(mustHex(t, "614e9b"), 5, 0, wire.BloomUpdateAll), nil},
		{"empty", wire.NewMsgFilterLoad(nil, 0, 0, wire.BloomUpdateNone), nil},
		{"odd flags", wire.NewMsgFilterLoad([]byte{1}, 1, 0xffffffff, 0x07), nil},
		{"oversized", wire.NewMsgFilterLoad(make([]byte, MaxFilterSize+1), 1, 0, 0), ErrFilterTooLarge},
		{"too many hash funcs", wire.NewMsgFilterLoad([]byte{1}, 51, 0, 0), ErrTooManyHashFuncs},
		{"nil", nil, ErrNilMessage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := LoadFilter(tc.msg)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("LoadFilter error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			back := f.MsgFilterLoad()
			if !bytes.Equal(back.Filter, tc.msg.Filter) || back.HashFuncs != tc.msg.HashFuncs ||
				back.Tweak != tc.msg.Tweak || back.Flags != tc.msg.Flags {
				t.Errorf("round trip %+v, want %+v", back, tc.msg)
			}
			if len(tc.msg.Filter) > 0 {
				tc.msg.Filter[0] ^= 0xff
				if f.Bits()[0] == tc.msg.Filter[0] {
					t.Error("LoadFilter aliases the message's bytes")
				}
			}
		})
	}
}

// TestCheckFilterAdd checks the filteradd size limit.
func TestCheckFilterAdd(t *testing.T) {
	tests := []struct {
		size    int
		wantErr bool
	}{{0, false}, {20, false}, {MaxFilterAddSize, false}, {MaxFilterAddSize + 1, true}}
	for _, tc := range tests {
		err := CheckFilterAdd(make([]byte, tc.size))
		if got := errors.Is(err, ErrFilterAddTooLarge); got != tc.wantErr {
			t.Errorf("CheckFilterAdd(%d bytes) = %v", tc.size, err)
		}
	}
}

// TestCompactSizeRoundTrip checks the length prefix at its boundaries.
func TestCompactSizeRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xfc, 0xfd, 0xffff, 0x10000, 0xffffffff, 0x100000000, ^uint64(0)} {
		enc := appendCompactSize(nil, v)
		var buf bytes.Buffer
		if err := wire.WriteVarInt(&buf, 0, v); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, buf.Bytes()) {
			t.Errorf("appendCompactSize(%d) = %x, wire writes %x", v, enc, buf.Bytes())
		}
		got, n, err := readCompactSize(enc)
		if err != nil || got != v || n != len(enc) {
			t.Errorf("readCompactSize(%s) = %d, %d, %v", hex.EncodeToString(enc), got, n, err)
		}
	}
}
