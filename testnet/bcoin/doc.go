// Package bcoin runs bcoin 1.0.2 (Node.js) on 127.0.0.1 as a second,
// independent BIP37 server for bloomwatch's tests, on testnet's driver.
//
// Package installs bcoin from npm into the user cache once (npm ci
// --ignore-scripts against the embedded lock file; BLOOMWATCH_BCOIN names
// an existing installation instead); CI runs TestBcoinPackage before the
// loopback-only suite so the tests find it offline. Start runs it on
// regtest with an in-memory chain, listeners on 127.0.0.1 and every
// outbound path closed (bcoinjs/launcher.js). A Node is a
// testnet.FullNode, so a Harness is a testnet.Chain like btcd's:
//
//	h := bcoin.NewT(t, bcoin.Options{}) // skips without Node.js, fails in CI
//	truth, _ := h.BuildChain(ctx, spec)
//	res, _ := h.Reorg(ctx, 2, testnet.ReorgOptions{})
//
// bcoin's chain is regtest's; only the addresses its RPCs take differ
// (Address). Reorg invalidates the losing branch's first block (bcoin
// then deletes the branch and empties its mempool), mines the winning
// branch on the same node and sends the losing branch's other
// transactions again. Its wire habits differ from btcd's and Core's;
// TestBcoinWire pins them down.
package bcoin
