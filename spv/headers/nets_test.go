package headers

import (
	"time"

	"github.com/bloomwatch/bloomwatch/netparams"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// easyNet returns a test network on regtest's genesis and proof-of-work
// limit (a hash in two meets it) that retargets every interval blocks, so
// that difficulty changes can be mined in a test. minDiff turns on the
// 20-minute rule; family selects BIP94 when it is RulesTestnet4.
func easyNet(name string, family netparams.Rules, interval int, minDiff bool,
	magic wire.BitcoinNet, checkpoints []chaincfg.Checkpoint) *netparams.Network {

	p := chaincfg.RegressionNetParams
	p.Name = name
	p.Net = magic
	p.PoWNoRetargeting = false
	p.ReduceMinDifficulty = minDiff
	p.MinDiffReductionTime = 2 * p.TargetTimePerBlock
	p.TargetTimespan = time.Duration(interval) * p.TargetTimePerBlock
	p.BIP0034Height, p.BIP0065Height, p.BIP0066Height = 0, 0, 0
	p.Checkpoints = checkpoints
	return &netparams.Network{
		Name:        name,
		Params:      &p,
		DefaultPort: p.DefaultPort,
		Rules:       family,
		Checkpoints: checkpoints,
	}
}

// bip94Net turns on btcd's EnforceBIP94 in an easy network's params, so
// btcd's checks apply BIP94 as the RulesTestnet4 family does.
func bip94Net(n *netparams.Network) *netparams.Network {
	n.Params.EnforceBIP94 = true
	return n
}
