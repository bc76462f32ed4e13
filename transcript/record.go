package transcript

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
)

// Version is the record format this package writes. Version 1 records
// (written before the field existed) carry no "v" and have the same
// fields; they read unchanged.
//
// The optional "via" field was added within version 2: records without
// it (written before it existed) read with an empty Via, and readers
// that predate it ignore it.
//
// Version 3 adds the getdata kind (KindGetData, with Count): the blocks a
// client requested, which leak its birthday and the blocks it re-fetches
// after a reload. Records of the other kinds are unchanged, so version 1
// and 2 transcripts read as before; a reader that predates version 3
// refuses version 3 records by their "v".
//
// Version 4 adds the transport a record's message left on (Transport:
// TransportV1, plaintext, or TransportV2, BIP324's encrypted transport)
// and the bytes an on-path observer saw for it (Wire). With v1 an
// observer on the path reads the record's message as the peer does; with
// v2 it sees only Wire and the time. A record that carries either field
// is written as version 4; one that carries neither keeps the version of
// its kind, so older readers still read it.
//
// Version 5 adds the BIP157/158 kinds (KindGetCFilters, KindGetBlock, with
// Count): what a compact-filter peer sees of a client. Records of the
// other kinds are unchanged.
const Version = 5

// minCFVersion is the first version with the BIP157/158 kinds.
const minCFVersion = 5

// TransportVersion is the first version with Transport and Wire: the
// version a filterload record that names its transport is written with.
const TransportVersion = 4

// minTransportVersion is TransportVersion.
const minTransportVersion = TransportVersion

// minGetDataVersion is the first version with getdata records.
const minGetDataVersion = 3

// filterVersion is the version filter records are written with: the
// lowest that carries them, so that a reader that predates version 3
// still reads a transcript without getdata records.
const filterVersion = 2

// VersionFor returns the version a record of kind k without Transport
// and Wire is written with: the lowest version that can carry it.
func VersionFor(k Kind) int {
	switch k {
	case KindGetData:
		return minGetDataVersion
	case KindGetCFilters, KindGetBlock:
		return minCFVersion
	}
	return filterVersion
}

// VersionOf returns the version r is written with: the lowest that
// carries its kind and its fields (version 4 once it names a Transport
// or a Wire length).
func VersionOf(r Record) int {
	v := VersionFor(r.Kind)
	if r.Transport != "" || r.Wire != 0 {
		v = max(v, minTransportVersion)
	}
	return v
}

// Kind names a BIP37 message a client sent to a peer.
type Kind string

// The BIP37 messages a transcript records.
const (
	KindFilterLoad  Kind = "filterload"
	KindFilterAdd   Kind = "filteradd"
	KindFilterClear Kind = "filterclear"
	// KindGetData is a request for Count consecutive filtered blocks
	// from Height on (one or more getdata messages of
	// MSG_FILTERED_BLOCK entries, which name blocks by hash: the peer
	// knows their heights). It is what the serving peer learns from the
	// request pattern, not a filter.
	KindGetData Kind = "getdata"
	// KindGetCFilters is a request for the compact filters (BIP157) of
	// Count consecutive blocks from Height on: the same filters for
	// every client, but the first height asked shows the client's
	// birthday.
	KindGetCFilters Kind = "getcfilters"
	// KindGetBlock is a request for Count consecutive whole blocks from
	// Height on (getdata MSG_WITNESS_BLOCK) by a client matching compact
	// filters locally: each is a block whose filter matched one of its
	// scripts (or, with reason check, the block that settles a
	// disagreement between peers' filter headers).
	KindGetBlock Kind = "getblock"
)

// BIP158 reports whether k is a kind of a compact-filter client
// (KindGetCFilters, KindGetBlock).
func (k Kind) BIP158() bool { return k == KindGetCFilters || k == KindGetBlock }

// MaxGetDataCount bounds a getdata record's Count: a chain of 2^31
// blocks.
const MaxGetDataCount = 1<<31 - 1

// Record is one BIP37 message as the receiving full node saw it: the
// adversary's view. Filter holds the filterload payload serialized exactly
// as on the wire (Bitcoin Core's CBloomFilter serialization: compact-size
// length, bit array, nHashFuncs, nTweak, nFlags); Data holds a filteradd
// element.
type Record struct {
	// V is the record's format version (0 when read from a version 1
	// record, which had no field).
	V      int       `json:"v,omitempty"`
	Seq    uint64    `json:"seq"`
	Time   time.Time `json:"time"`
	Peer   string    `json:"peer"`
	Height int32     `json:"height"`
	Kind   Kind      `json:"kind"`
	Filter HexBytes  `json:"filter,omitempty"`
	Data   HexBytes  `json:"data,omitempty"`
	// Count is the number of consecutive blocks a getdata record
	// requested from Height on (version 3); 0 for the other kinds.
	Count int64 `json:"count,omitempty"`
	// Reason says why the client sent it (the Reason constants: initial, restart, new-peer,
	// new-key, fp-drift, manual, outpoints; for a getdata: sync, live,
	// refetch): ground truth the adversary does not have, kept for the
	// analyzer's labels.
	Reason string `json:"reason,omitempty"`
	// Via names the network path the message left on: ViaDirect (a
	// direct TCP connection), ViaProxy (through the SOCKS5 proxy without
	// stream isolation) or ViaIsolated(id) (through the proxy on its own
	// stream: id is the SOCKS5 username, equal to the password, which
	// Tor's IsolateSOCKSAuth maps to a circuit of its own). Records with
	// equal Via left the client on the same path, so a proxy exit saw
	// them from the same address; records with different isolation ids
	// did not share a circuit. The id is an isolation label, never a
	// secret. Empty in records written before the field existed.
	Via string `json:"via,omitempty"`
	// Transport is the P2P transport of the connection the message left
	// on (version 4): TransportV1 (plaintext: an on-path observer reads
	// the message as the peer does) or TransportV2 (BIP324: the observer
	// sees only Wire and Time). Empty in records written before the
	// field existed, which all left on v1.
	Transport string `json:"transport,omitempty"`
	// Wire is the number of bytes an on-path observer saw for the
	// message (version 4): the v1 frame (24-byte header and payload), or
	// the v2 packet with its 20 bytes of framing and, when the client
	// padded it, the decoy packet sent with it in the same write. 0 when
	// unknown (a getdata record covers part of a message).
	Wire int `json:"wire,omitempty"`

	// bloom is a filterload's Filter decoded, set where the record is
	// read (Read), written (File.Append) or sent (WithBloom): one
	// *bip37.Filter shared by every copy of the record.
	bloom *bip37.Filter
}

// Bloom returns a filterload record's filter. A record that Read returned,
// that File.Append wrote or that carries its sender's filter (WithBloom)
// hands out the one it holds, decoded once and shared by every copy of the
// record and every reader: it must not be modified. Any other record
// decodes Filter at each call.
func (r Record) Bloom() (*bip37.Filter, error) {
	if r.bloom != nil {
		return r.bloom, nil
	}
	if r.Kind != KindFilterLoad {
		return nil, fmt.Errorf("%s record: no filter", r.Kind)
	}
	return bip37.Deserialize(r.Filter)
}

// WithBloom returns r holding f, the filter whose serialization r.Filter
// is (the sender's own, which it no longer modifies), so that no reader
// decodes it again: File.Append checks it instead of decoding Filter.
func (r Record) WithBloom(f *bip37.Filter) Record {
	r.bloom = f
	return r
}

// Values of Record.Transport.
const (
	// TransportV1 is the original plaintext P2P transport.
	TransportV1 = "v1"
	// TransportV2 is BIP324's encrypted transport.
	TransportV2 = "v2"
)

// MaxWire bounds Record.Wire: a BIP324 packet holds at most 2^24-1 bytes
// of content, and a padded filterload is one packet and one decoy.
const MaxWire = 2 << 24

// Values of Record.Via.
const (
	// ViaDirect is a direct TCP connection to the peer.
	ViaDirect = "direct"
	// ViaProxy is a connection through the SOCKS5 proxy that shares its
	// stream with every other connection made without credentials.
	ViaProxy = "proxy"
	// viaIsolatedPrefix starts the Via of a stream-isolated connection.
	viaIsolatedPrefix = ViaProxy + ":"
	// MaxIsolationID is the longest isolation id: a SOCKS5 username
	// (RFC 1929) holds at most 255 bytes.
	MaxIsolationID = 255
)

// ViaIsolated returns the Via of a connection through the SOCKS5 proxy
// whose stream isolation credential (username and password) is id.
func ViaIsolated(id string) string { return viaIsolatedPrefix + id }

// IsolationID returns the stream isolation id of a Via made by
// ViaIsolated, and false for any other Via.
func IsolationID(via string) (string, bool) {
	id, ok := strings.CutPrefix(via, viaIsolatedPrefix)
	return id, ok && id != ""
}

// checkVia accepts the Via values this package defines.
func checkVia(via string) error {
	switch via {
	case "", ViaDirect, ViaProxy:
		return nil
	}
	id, ok := IsolationID(via)
	if !ok {
		return fmt.Errorf("unknown via %q", via)
	}
	if len(id) > MaxIsolationID {
		return fmt.Errorf("isolation id of %d bytes, at most %d", len(id), MaxIsolationID)
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return fmt.Errorf("isolation id %q: not printable ASCII", id)
		}
	}
	return nil
}

// Validate checks what a full node would check before acting on the
// message: a known kind, a filterload whose filter deserializes within
// BIP37's caps (36,000 bytes, 50 hash functions), a filteradd element of
// at most 520 bytes, a getdata (version 3 or later) of at least one block
// from a height of at least 0, and a version this package can read; and a
// Via this package defines.
func (r Record) Validate() error {
	return r.check()
}

// check is Validate, keeping a filterload's decoded filter in r (or, when
// r already holds one, checking it against Filter without decoding).
func (r *Record) check() error {
	if r.Kind != KindGetData && !r.Kind.BIP158() && r.Count != 0 {
		return fmt.Errorf("%s with a block count", r.Kind)
	}
	if r.V < 0 || r.V > Version {
		return fmt.Errorf("record version %d, this bloomwatch reads up to %d", r.V, Version)
	}
	if err := checkVia(r.Via); err != nil {
		return err
	}
	if err := r.checkTransport(); err != nil {
		return err
	}
	switch r.Kind {
	case KindFilterLoad:
		if len(r.Filter) == 0 {
			return fmt.Errorf("filterload without filter")
		}
		if r.bloom != nil {
			return checkBloom(r.Filter, r.bloom)
		}
		f, err := bip37.Deserialize(r.Filter)
		if err != nil {
			return fmt.Errorf("filterload: %w", err)
		}
		r.bloom = f
	case KindFilterAdd:
		if len(r.Data) == 0 {
			return fmt.Errorf("filteradd without data")
		}
		if err := bip37.CheckFilterAdd(r.Data); err != nil {
			return fmt.Errorf("filteradd: %w", err)
		}
	case KindFilterClear:
	case KindGetData:
		if r.V != 0 && r.V < minGetDataVersion {
			return fmt.Errorf("getdata in a version %d record (getdata records start at version %d)", r.V, minGetDataVersion)
		}
		if r.Count < 1 || r.Count > MaxGetDataCount || r.Height < 0 {
			return fmt.Errorf("getdata of %d blocks from height %d: want at least 1 block from a height of at least 0", r.Count, r.Height)
		}
	case KindGetCFilters, KindGetBlock:
		if r.V != 0 && r.V < minCFVersion {
			return fmt.Errorf("%s in a version %d record (they start at version %d)", r.Kind, r.V, minCFVersion)
		}
		if r.Count < 1 || r.Count > MaxGetDataCount || r.Height < 0 {
			return fmt.Errorf("%s of %d blocks from height %d: want at least 1 block from a height of at least 0", r.Kind, r.Count, r.Height)
		}
	default:
		return fmt.Errorf("unknown kind %q", r.Kind)
	}
	return nil
}

// checkTransport accepts a Transport this package defines and a Wire
// length in range, both only in records of version 4 or later (or
// unversioned ones being written).
func (r Record) checkTransport() error {
	switch r.Transport {
	case "", TransportV1, TransportV2:
	default:
		return fmt.Errorf("unknown transport %q", r.Transport)
	}
	if r.Wire < 0 || r.Wire > MaxWire {
		return fmt.Errorf("wire length %d not in [0, %d]", r.Wire, MaxWire)
	}
	if r.Wire != 0 && r.Transport == "" {
		return fmt.Errorf("wire length without a transport")
	}
	if (r.Transport != "" || r.Wire != 0) && r.V != 0 && r.V < minTransportVersion {
		return fmt.Errorf("transport in a version %d record (transport starts at version %d)", r.V, minTransportVersion)
	}
	return nil
}

// checkBloom checks that filter, a filterload payload, is the
// serialization of f, within BIP37's caps: f stands for it without a
// decode.
func checkBloom(filter []byte, f *bip37.Filter) error {
	if f.Size() > bip37.MaxFilterSize || f.HashFuncs() > bip37.MaxHashFuncs {
		return fmt.Errorf("filterload: %d bytes, %d hash functions: over BIP37's caps", f.Size(), f.HashFuncs())
	}
	if !bytes.Equal(filter, f.Serialize()) {
		return fmt.Errorf("filterload: the filter given with the record is not the one serialized")
	}
	return nil
}

// HexBytes is a byte slice that marshals to and from a hex JSON string.
type HexBytes []byte

// MarshalJSON implements json.Marshaler.
func (h HexBytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(hex.EncodeToString(h))
}

// UnmarshalJSON implements json.Unmarshaler. A string without escapes
// (what MarshalJSON writes) is decoded in place, without a copy; a filter
// is up to 72,000 hex digits and start-up reads every one of the
// transcript's.
func (h *HexBytes) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		d := make([]byte, hex.DecodedLen(len(b)-2))
		if _, err := hex.Decode(d, b[1:len(b)-1]); err != nil {
			return fmt.Errorf("hex bytes: %w", err)
		}
		*h = d
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	d, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("hex bytes: %w", err)
	}
	*h = d
	return nil
}

// FilterRecords returns the records of recs that concern a filter
// (filterload, filteradd, filterclear), in order, without the getdata and
// compact-filter records: what a peer learned from the filters alone.
func FilterRecords(recs []Record) []Record {
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		if r.Kind != KindGetData && !r.Kind.BIP158() {
			out = append(out, r)
		}
	}
	return out
}
