// Package testnet runs real btcd nodes on 127.0.0.1 for bloomwatch's
// integration tests, benchmarks and demo.
//
// It builds btcd from the module graph once into a user cache (BtcdBinary),
// launches regtest or simnet nodes on free loopback ports (StartNode), and
// wraps a node with an in-memory funding wallet whose coinbases pay it
// (Harness): payments, noise transactions of mixed script types, spends of
// the user's outputs with a deterministic HD Keyring, reorganisations with
// a second node (Reorg) and reproducible scenario chains whose ground truth
// a synced wallet can be compared with (BuildChain).
//
// Nodes never contact anything but 127.0.0.1: regtest and simnet have no
// DNS seeds, DNS seeding is disabled, and every listener is bound to the
// loopback address. Stop and Close reap the btcd process (RPC stop, then
// SIGKILL by PID after a timeout) and remove temporary directories.
//
// Apart from the demo's live-chain Driver, which runs one goroutine, the
// package starts no goroutines of its own: processes are reaped by
// polling wait4 and btcd's output goes to a file.
//
// btcd quirks the harness works around (v0.24.2, still so in v0.25.0): gettxout does not see
// mempool spends; a reorg delivered over P2P leaves the losing branch's
// double-spent transactions in the mempool (Reorg submits the winning
// blocks over RPC instead, see ReorgOptions.P2P); segwit activates only
// after three BIP9 windows (SegwitHeight), which New mines.
//
// btcd (v0.24.2 and v0.25.0) deletes its regtest database at every start, so a chain
// that must survive a restart has to use simnet.
//
// A second, independent BIP37 server: bcoin 1.0.2 (Node.js), installed
// from npm into the same user cache (BcoinPackage), started on regtest
// with an in-memory chain, listeners on 127.0.0.1 and every outbound
// path closed (StartBcoin, bcoinjs/launcher.js), and wrapped like btcd
// with the funding wallet (BcoinHarness: payments by script, BuildChain,
// ScanTruth from bcoin's blocks, Reorg by invalidateblock). Its wire
// habits differ from btcd's and Core's; TestBcoinWire pins them down.
package testnet
