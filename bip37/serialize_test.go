package bip37

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"
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
				require.ErrorIs(t, err, tc.wantErr, "Deserialize = %v, %v; want %v", f, err, tc.wantErr)
				require.Nil(t, f, "Deserialize = %v, %v; want %v", f, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			got := f.Serialize()
			require.Equal(t, tc.in, got, "round trip: %x, want %x", got, tc.in)
			var buf bytes.Buffer
			require.NoError(t, f.MsgFilterLoad().BtcEncode(&buf, wire.ProtocolVersion, wire.LatestEncoding))
			require.Equal(t, tc.in, buf.Bytes(), "wire encoding %x, want %x", buf.Bytes(), tc.in)
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
				require.ErrorIs(t, err, tc.wantErr, "LoadFilter error %v, want %v", err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			back := f.MsgFilterLoad()
			require.Equal(t, tc.msg.Filter, back.Filter, "round trip %+v, want %+v", back, tc.msg)
			require.Equal(t, tc.msg.HashFuncs, back.HashFuncs, "round trip %+v, want %+v", back, tc.msg)
			require.Equal(t, tc.msg.Tweak, back.Tweak, "round trip %+v, want %+v", back, tc.msg)
			require.Equal(t, tc.msg.Flags, back.Flags, "round trip %+v, want %+v", back, tc.msg)
			if len(tc.msg.Filter) > 0 {
				tc.msg.Filter[0] ^= 0xff
				require.NotEqual(t, tc.msg.Filter[0], f.Bits()[0], "LoadFilter aliases the message's bytes")
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
		got := errors.Is(err, ErrFilterAddTooLarge)
		require.Equal(t, tc.wantErr, got, "CheckFilterAdd(%d bytes) = %v", tc.size, err)
	}
}

// TestCompactSizeRoundTrip checks the length prefix at its boundaries.
func TestCompactSizeRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 0xfc, 0xfd, 0xffff, 0x10000, 0xffffffff, 0x100000000, ^uint64(0)} {
		enc := appendCompactSize(nil, v)
		var buf bytes.Buffer
		require.NoError(t, wire.WriteVarInt(&buf, 0, v))
		require.Equal(t, buf.Bytes(), enc, "appendCompactSize(%d) = %x, wire writes %x", v, enc, buf.Bytes())
		got, n, err := readCompactSize(enc)
		require.NoError(t, err, "readCompactSize(%s) = %d, %d", hex.EncodeToString(enc), got, n)
		require.Equal(t, v, got, "readCompactSize(%s) = %d, %d, %v", hex.EncodeToString(enc), got, n, err)
		require.Equal(t, len(enc), n, "readCompactSize(%s) = %d, %d, %v", hex.EncodeToString(enc), got, n, err)
	}
}
