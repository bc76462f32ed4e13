package spv

// V1Stalls exports v1Stalls to the external tests.
var V1Stalls = v1Stalls

// StallNextV2Keys makes the next n v2 keys any node sends keys that stall
// a btcd v1 peer (bytes 16-19 rewritten to a 1 MiB payload length), as 1
// key in 128 is by chance; the returned func undoes what is left of it.
func StallNextV2Keys(n int) (undo func()) {
	stallKeys.Store(int32(n))
	return func() { stallKeys.Store(0) }
}

// RefusedTxScore exports the score of a refused transaction to the
// external tests.
var RefusedTxScore = misbehaviorRefusedTx.Score()

// WirePacket is wirePacket, for the external tests that tap the wire.
type WirePacket = wirePacket

// SetWireTap makes the node of cfg report every write and every message
// of its peers to tap (Config.wireTap).
func SetWireTap(cfg *Config, tap func(WirePacket)) { cfg.wireTap = tap }
