package bip37

import "strings"

// Rules names the server implementation whose relevance test a filter
// applies in MatchTx, MatchTxAndUpdate and Explain. A light client that
// keeps a copy of the filter it loaded into a peer must test
// transactions as that peer does, or it blames the peer for matches its
// own copy cannot see: btcd tests empty pushes, so once a filter's bits
// cover the empty element (a full filter does, with probability fill^k)
// btcd matches every output script that pushes OP_0, every segwit output,
// and a copy with Core's rules matches none of them.
type Rules uint8

const (
	// RulesCore is Bitcoin Core's CBloomFilter::IsRelevantAndUpdate
	// (the default): empty pushes are never tested; a script is read op
	// by op and a parse failure keeps the pushes before it.
	RulesCore Rules = iota
	// RulesBtcd is btcd's (btcutil/bloom's matchTxAndUpdate over
	// txscript.PushedData): every push is tested, OP_0 and other empty
	// pushes too; a script that fails to parse anywhere is not tested at
	// all. Everything else is as in Core.
	RulesBtcd
)

// String names the rules.
func (r Rules) String() string {
	if r == RulesBtcd {
		return "btcd"
	}
	return "core"
}

// RulesFor returns the rules of the server whose BIP14 user agent is
// agent: btcd's for btcd (its agent names "/btcd:"), Core's otherwise:
// Bitcoin Core, and bcoin (1.0.2's Script.test skips empty pushes and
// stops at the first op that does not parse, as Core does).
func RulesFor(agent string) Rules {
	if strings.Contains(agent, "/btcd:") {
		return RulesBtcd
	}
	return RulesCore
}

// SetRules makes f test transactions as servers following r do. Clones
// keep the rules; serialization does not carry them (a server applies
// its own).
func (f *Filter) SetRules(r Rules) { f.rules = r }

// Rules returns the rules f tests transactions with.
func (f *Filter) Rules() Rules { return f.rules }

// firstPushBtcd is firstPush under btcd's rules: txscript.PushedData
// returns every push, the empty ones too (OP_0 as nil), and nothing at
// all when the script fails to parse.
func (f *Filter) firstPushBtcd(script []byte) ([]byte, bool) {
	var hit []byte
	found := false
	for len(script) > 0 {
		op, data, rest, ok := scriptOp(script)
		if !ok {
			return nil, false
		}
		if !found && op <= opPushData4 && f.Matches(data) {
			hit, found = data, true
		}
		script = rest
	}
	return hit, found
}
