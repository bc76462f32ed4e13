// Package testnet runs real full nodes on 127.0.0.1 for bloomwatch's
// integration tests, benchmarks and demo, and drives their chains.
//
// # Nodes
//
// StartNode builds btcd from the module graph once into a user cache
// (BtcdBinary) and starts it on regtest or simnet on free loopback ports;
// a Node reports its P2P and RPC addresses and serves the RPCs a test
// needs. The bcoin node (Node.js, bcoin 1.0.2 from npm) lives in
// testnet/bcoin. Both satisfy FullNode.
//
// # Chains
//
// A Chain is a FullNode plus an in-memory funding wallet whose key the
// node's coinbases pay. Every chain operation is a Chain method, the same
// on btcd and bcoin: Mine, Pay, PayAddress, PayScript and Noise (other
// users' payments of mixed script types), Spend of a deterministic HD
// Keyring's outputs, BuildChain (a reproducible scenario chain and the
// ground truth a synced wallet must reproduce), ScanTruth (the node's own
// view of a wallet) and Reorg. A harness only starts its node and says
// how that node makes Reorg's competing branch (Brancher).
//
//	h := testnet.NewT(t, testnet.Options{})  // btcd, segwit active, funds spendable
//	key, _ := testnet.NewKeyring(testnet.DemoSeed, h.Params())
//	truth, _ := h.BuildChain(ctx, testnet.ChainSpec{
//		Blocks: 30, TxsPerBlock: 2, Keyring: key, WatchAddrs: 6, SpendFraction: 0.3,
//	})
//	// sync a wallet from h.Node().P2PAddr() and compare it with truth
//
// A scenario that takes a *Chain runs against both nodes:
//
//	for _, c := range []*testnet.Chain{testnet.NewT(t, testnet.Options{}).Chain, bcoin.NewT(t, bcoin.Options{}).Chain} {
//		scenario(t, c)
//	}
//
// btcd's Harness adds what only btcd does here: the second node its Reorg
// uses (ReorgNode), extra peers (StartPeer) and restarts on a kept simnet
// chain (RestartNode). StartDriver keeps a harness's chain moving in one
// goroutine: the demo's world.
//
// # Loopback only
//
// Nodes never contact anything but 127.0.0.1: regtest and simnet have no
// DNS seeds, DNS seeding is disabled, every listener is bound to the
// loopback address, and bcoin's launcher closes every outbound path but
// the peers it is given. Stop and Close reap the node processes (SIGINT,
// then SIGKILL by PID after a timeout) and remove temporary directories.
// Apart from the Driver, the package starts no goroutines of its own:
// processes are reaped by polling wait4 and their output goes to a file.
// testnet/dnsseed and testnet/socks are a DNS seed and a SOCKS5 proxy on
// loopback; testnet/hostile holds wire-protocol peers that misbehave.
//
// # btcd quirks
//
// The harness works around these (v0.24.2, still so in v0.25.0):
// gettxout does not see mempool spends; a reorg delivered over P2P leaves
// the losing branch's double-spent transactions in the mempool (Reorg
// submits the winning blocks over RPC instead, see ReorgOptions.P2P);
// segwit activates only after three BIP9 windows (SegwitHeight), which
// NewChain mines; btcd deletes its regtest database at every start, so a
// chain that must survive a restart has to use simnet; btcd ignores
// getheaders while its tip is more than 24 hours old, so NewChain mines
// a block on a stale kept chain.
package testnet
