package spv

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/stretchr/testify/require"

	"github.com/bloomwatch/bloomwatch/internal/doctable"
	"github.com/bloomwatch/bloomwatch/internal/doctable/doctabletest"
	"github.com/bloomwatch/bloomwatch/testnet/hostile"
)

// reliabilityDoc is the doc the bounds tables are generated into.
const reliabilityDoc = "../docs/RELIABILITY.md"

// boundsTableCommand regenerates the tables TestReliabilityBoundsTable
// holds.
const boundsTableCommand = "go test ./spv -run TestReliabilityBoundsTable -update"

// TestReliabilityBoundsTable holds docs/RELIABILITY.md's two bounds
// tables to the code: the rate budget of every command btcd's wire knows
// (hostile.FloodCommands, the enumeration TestEveryMessageTypeHasABudget
// floods) and of the commands it does not, and every named bound of the
// package (bounds, checked against the source: every constant of
// budgets.go and every max* constant, each once). A difference fails with
// the fresh table; -update writes it into the doc.
func TestReliabilityBoundsTable(t *testing.T) {
	doctabletest.CoverSource(t, "bounds", bounds, "budgets.go")
	named, err := doctable.Render("", bounds)
	require.NoError(t, err)
	doctabletest.Sync(t, reliabilityDoc,
		doctabletest.Region{Name: "message budgets", Command: boundsTableCommand, Table: messageBudgetTable(t)},
		doctabletest.Region{Name: "named bounds", Command: boundsTableCommand, Table: named},
	)
}

// messageBudgetTable renders the rate budget of every command btcd's wire
// knows, one row for the commands of each budget in the flood's order, the
// default's row naming the commands wire does not know too.
func messageBudgetTable(t *testing.T) string {
	var order []string             // a row's cells, by first command
	names := map[string][]string{} // cells -> commands
	var unknown []string
	for _, cmd := range hostile.FloodCommands() {
		if !wireKnows(t, cmd) {
			unknown = append(unknown, "`"+cmd+"`")
			continue
		}
		cells := budgetCells(cmd)
		if _, ok := names[cells]; !ok {
			order = append(order, cells)
		}
		names[cells] = append(names[cells], "`"+cmd+"`")
	}
	require.NotEmpty(t, unknown, "the flood holds commands wire does not know")
	defaults := budgetCells(unknownCmd)
	require.Contains(t, names, defaults, "some command wire knows has the default budget")
	var b strings.Builder
	b.WriteString("| commands | rate (messages a second) | burst | payload | what the budget protects |\n|---|---|---|---|---|\n")
	for _, cells := range order {
		label := strings.Join(names[cells], ", ")
		if cells == defaults {
			label += "; any command wire does not know (of the soak's: " + strings.Join(unknown, ", ") + ")"
		}
		fmt.Fprintf(&b, "| %s | %s |\n", label, cells)
	}
	return b.String()
}

// budgetCells renders cmd's budget as the cells of its row after the
// commands.
func budgetCells(cmd string) string {
	bud := budgetFor(cmd)
	rate, burst := "none: an answer", "-"
	if !math.IsInf(bud.Rate, 1) {
		rate, burst = strconv.FormatFloat(bud.Rate, 'g', -1, 64), doctable.Group(int64(bud.Burst))
		if _, named := msgBudgets[cmd]; !named {
			rate += " (the default)"
		}
	}
	payload := "wire's cap"
	if limit, ok := payloadCap(cmd); ok {
		payload = doctable.FormatValue(int64(limit), "bytes") + "; more bans"
	}
	return rate + " | " + burst + " | " + payload + " | " + bud.Why
}

// wireKnows reports whether btcd's wire decodes cmd: an empty payload of a
// command it does not know reads as wire.ErrUnknownMessage.
func wireKnows(t *testing.T, cmd string) bool {
	var name [wire.CommandSize]byte
	copy(name[:], cmd)
	var msg bytes.Buffer
	sum := chainhash.DoubleHashB(nil)
	require.NoError(t, binary.Write(&msg, binary.LittleEndian, struct {
		Net      uint32
		Command  [wire.CommandSize]byte
		Length   uint32
		Checksum [4]byte
	}{uint32(wire.SimNet), name, 0, [4]byte(sum[:4])}))
	_, _, err := wire.ReadMessage(&msg, wire.ProtocolVersion, wire.SimNet)
	return !errors.Is(err, wire.ErrUnknownMessage)
}

// bounds lists every constant of this file and every max* constant of
// the package, each once; TestReliabilityBoundsTable checks against the
// source that none is missing.
var bounds = []doctable.Bound{
	// The connection: what one peer makes the node write, read and hold.
	{Name: "maxWriteQueueBytes", Value: maxWriteQueueBytes, Unit: "bytes", Protects: "bytes queued for a peer and unwritten (requests, the pongs btcd queues per ping): past it the peer is disconnected and scored 20"},
	{Name: "writeTimeout", Value: writeTimeout, Unit: "", Protects: "each write to a peer's socket: a peer that leaves its socket unread fails the write that would wait"},
	{Name: "maxInboxBytes", Value: maxInboxBytes, Unit: "bytes", Protects: "a peer's messages read and not yet handled: past it its reader waits and its TCP window closes"},
	{Name: "maxRejectPayload", Value: maxRejectPayload, Unit: "bytes", Protects: "a reject's payload: a larger one is refused at its v1 header, before it is read, and bans"},
	{Name: "maxPeerStateBytes", Value: maxPeerStateBytes, Unit: "bytes", Protects: "all the manager holds for one peer (requests, a merkle block being filled, txids, side tips); FuzzMessageSequences checks it"},
	{Name: "excessScore", Value: excessScore, Unit: "points", Protects: "the ban score of each message over its type's rate budget: ten past the burst ban the peer"},
	// The manager's state per peer, each where a peer chooses how much.
	{Name: "maxUnknown", Value: maxUnknown, Unit: "txids", Protects: "the announced txids remembered per peer and filter: an inv flood past it explains nothing"},
	{Name: "maxTxReqs", Value: maxTxReqs, Unit: "txs", Protects: "the transactions asked from one peer at a time"},
	{Name: "maxUnmatchedRelays", Value: maxUnmatchedRelays, Unit: "txs", Protects: "announced transactions outside the filter fetched from a peer per filterload; later ones are not fetched"},
	{Name: "maxRecentRelays", Value: maxRecentRelays, Unit: "txs", Protects: "the relays kept for replay into a later announcer's mirror, in count"},
	{Name: "maxRecentRelayBytes", Value: maxRecentRelayBytes, Unit: "bytes", Protects: "the same relays, in serialized bytes (a peer chooses what it relays)"},
	{Name: "maxUnconnectingHeaders", Value: maxUnconnectingHeaders, Unit: "messages", Protects: "unsolicited headers in a row that do not connect: then the peer is scored and dropped (Core's limit)"},
	{Name: "maxSideTips", Value: maxSideTips, Unit: "tips", Protects: "the side-branch tips remembered per peer; the oldest is forgotten, unscored"},
	{Name: "maxMatchAttempts", Value: maxMatchAttempts, Unit: "requests", Protects: "requests of one block before the peers that failed it are scored"},
	{Name: "maxTransportMemory", Value: maxTransportMemory, Unit: "addresses", Protects: "each set of addresses remembered as v1-only or v2 (they come from addr messages)"},
	{Name: "DefaultRetryMax", Value: DefaultRetryMax, Unit: "", Protects: "the largest reconnect backoff (Tuning.RetryMax's default): a peer that keeps failing is dialed again at most this far apart"},
	{Name: "maxSeedAddrs", Value: maxSeedAddrs, Unit: "addresses", Protects: "the addresses taken from one DNS seed's answer (Core's limit)"},
	// The log: what a peer makes the node write about it.
	{Name: "logBurst", Value: logBurst, Unit: "lines", Protects: "the lines of one kind about one peer written at once; past it they are counted in one \"suppressed N\" line"},
	{Name: "logRate", Value: logRate, Unit: "lines a second", Protects: "the refill of that bucket"},
	{Name: "logFieldMax", Value: logFieldMax, Unit: "bytes", Protects: "each string of a log line about a peer (a reject reason, a user agent, an error carrying either), escaped by peertext.Clean"},
	{Name: "maxLogKeys", Value: maxLogKeys, Unit: "buckets", Protects: "the (peer, kind) buckets held: reached only by a bug, they are then forgotten, not grown"},
	{Name: "LogFileMaxBytes", Value: LogFileMaxBytes, Unit: "bytes", Protects: "the log file: rotated past it (github.com/jrick/logrotate)"},
	{Name: "LogFileRolls", Value: LogFileRolls, Unit: "files", Protects: "the gzipped old log files kept: a log flood fills at most (1 + this) times LogFileMaxBytes before compression"},
	// Broadcasts and rebroadcasts: what the node sends, holds and resends.
	{Name: "MaxBroadcastBytes", Value: MaxBroadcastBytes, Unit: "bytes", Protects: "what a broadcast target may send during a broadcast"},
	{Name: "maxBroadcastGetData", Value: maxBroadcastGetData, Unit: "messages", Protects: "the getdata for the transaction a broadcast answers"},
	{Name: "maxBroadcastTargets", Value: maxBroadcastTargets, Unit: "peers", Protects: "the targets one broadcast connects to when the first are behind or unreachable"},
	{Name: "maxRebroadcastTxs", Value: maxRebroadcastTxs, Unit: "txs", Protects: "the transactions held for rebroadcast; past it a broadcast is sent once, not held"},
	{Name: "maxRebroadcastBytes", Value: maxRebroadcastBytes, Unit: "bytes", Protects: "the serialized bytes of the transactions held for rebroadcast"},
	{Name: "maxRebroadcastBlocks", Value: maxRebroadcastBlocks, Unit: "blocks", Protects: "the blocks at the tip a transaction is resent for without confirming (a day of mainnet blocks)"},
	{Name: "minRebroadcastInterval", Value: minRebroadcastInterval, Unit: "", Protects: "the least time between two sends of one transaction, when blocks come in a burst"},
	{Name: "rebroadcastTimeout", Value: rebroadcastTimeout, Unit: "", Protects: "one rebroadcast: connection, handshake, getdata and a relay back"},
	// Checks, filters and the data dir.
	{Name: "maxCheckAttempts", Value: maxCheckAttempts, Unit: "rounds", Protects: "the rounds of second peers asked about one block before its check is abandoned"},
	{Name: "MaxCheckPeers", Value: MaxCheckPeers, Unit: "peers", Protects: "the largest Tuning.CheckPeers (second peers asked per checked block)"},
	{Name: "maxCarried", Value: maxCarried, Unit: "outpoints", Protects: "the outpoints carried from one filter to the next (a 36,000-byte filter tells about 60,000 apart)"},
	{Name: "maxDeferFactor", Value: maxDeferFactor, Unit: "quiet times", Protects: "how long the quiet window may hold a due filter reload"},
	{Name: "maxRekeys", Value: maxRekeys, Unit: "keys", Protects: "the new v2 keys drawn per connection for keys that would stall a btcd v1 peer"},
	{Name: "MaxDecoys", Value: MaxDecoys, Unit: "decoys", Protects: "the largest Config.Decoys"},
	{Name: "maxDecoyTxs", Value: maxDecoyTxs, Unit: "txids", Protects: "the remembered decoy-matched txids"},
	{Name: "MaxStateFileBytes", Value: MaxStateFileBytes, Unit: "bytes", Protects: "each state file read at start (bans, decoys, filter state, unfinished checks): a larger one is refused before it is read"},
}
