// Package wallet is bloomwatch's watch-only wallet, built on btcwallet's
// storage packages and synced by the spv node through the watch.Watcher
// interface.
//
// # Storage
//
// One bbolt file (wallet.db in the data directory) opened through walletdb
// holds three namespaces:
//
//   - waddrmgr: a watch-only address manager (created with a nil root
//     key) with one scope per BIP43 purpose in use (44 P2PKH, 49
//     P2SH-P2WPKH, 84 P2WPKH, 86 P2TR) and one watch-only account per
//     imported extended public key or ranged descriptor, and the sync
//     point with the recent block hashes used to find a reorg's fork
//     point. It writes no row per address: the wallet derives each
//     address once (P2TR ones with the BIP86 tweak) and stores it in its
//     own namespace (hdstore.go).
//   - wtxmgr: the wallet's transactions, credits, debits, unspent outputs
//     and balances, with its rollback and double-spend eviction.
//   - bloomwatch: what neither package covers: the HD accounts' derived
//     output scripts with their used flags (hd-scripts), single imported addresses
//     and raw scripts (waddrmgr imports an address only with its public
//     key or redeem script, which a watch-only user rarely has), the
//     per-block record of every transaction peers sent with its verdict
//     (relevant or false positive), the counters, the gap limits, the birthday, and the imported output
//     descriptors as given, with their checksums.
//
// # Descriptors
//
// Output descriptors (BIP380-386, multisig BIP383, multipath BIP389) are
// parsed and checked by package wallet/descriptor, and by ParseDescriptor
// for a network by name: pkh, sh(wpkh), wpkh, key-path tr, sh/wsh/sh(wsh)
// of multi and sortedmulti, addr and raw, with public keys only (the
// wallet decodes the address or script of addr and raw). A ranged
// single-key descriptor is watched as a waddrmgr account (see
// descriptor_wallet.go for why and what shapes that allows), a ranged
// multisig one by the wallet's own derivation with the same gap rules
// (descriptor_msig.go), a non-ranged one as imported scripts. The filter
// holds one element per multisig address, the push its output script has
// (the 32-byte P2WSH program or the 20-byte P2SH hash; the descriptor
// package's multi.go says why no public key); its spends match through
// their outpoints.
//
// Receive hands out the next unused receive address of an account or
// descriptor and records it (getnewaddress), refusing past the gap limit
// unless asked (receive.go); the filter covers what it hands out.
//
// The public passphrase and scrypt parameters of the watch-only manager
// are discussed at publicPassphrase and scryptOptions: they protect
// nothing, on purpose, and Open stays fast.
//
// # Sync
//
// ApplyBlock judges each transaction a peer sent: it is the wallet's when
// it pays a watched script or spends a watched outpoint (unconfirmed
// outputs included); anything else (an invalid transaction too, see
// checkTx) is a false positive, counted and kept by txid but never stored
// as a wallet transaction. Addresses are derived
// as payments use them, within the same block: a payment to index i makes
// the addresses through i+gap needed (spv re-fetches blocks when its
// filter lacks one: the gap-limit race), and every HD branch keeps a
// lookahead reserve of addresses derived beyond that (DefaultReserve,
// WithReserve; CatchUpReserve when FilterElements expects a catch-up;
// ReserveHorizon blocks of the branch's own pace when more, at most
// MaxReserve), kept whole: when fewer remain, a third more than the
// reserve is derived and reported to the node as its reserve elements,
// which it loads at its next scheduled reload: a payment never needs a
// reload to stay safe.
// Addresses beyond the gap are watched, never marked used. Each block's changes, its match
// record, the counters and the sync point are written in one walletdb
// transaction; several blocks share a transaction (WithBatch: up to
// DefaultBatchBlocks blocks or DefaultBatchInterval) and Flush, Close,
// Rollback, mempool transactions and imports commit. A process killed at
// any moment reopens at its last commit with every counter consistent
// with it, and the node syncs again from there.
//
// # Unconfirmed transactions
//
// A transaction a peer relays from its mempool is only that peer's word:
// an SPV node has no UTXO set to check its inputs, so a peer can relay a
// spend of a wallet coin that will never confirm, or a payment from a
// made-up input with 70,000 outputs. ApplyMempoolTx keeps a relevant one
// in wtxmgr's unconfirmed set (see pending.go) within budgets (budget.go):
//
//   - An invalid transaction (an output value outside [0, 21e6 BTC] or a
//     sum above it, a duplicated input, ...; checkTx) is refused, and is
//     never the wallet's in a block either; every sum of amounts holds at
//     the int64 bounds instead of wrapping around.
//   - A transaction larger than any standard one (MaxPendingTxSize) or
//     adding more than MaxPendingTxElements filter elements is refused
//     (the relaying peer is scored), and so is one that would take the
//     unconfirmed set past MaxPendingTxs, MaxPendingBytes or
//     MaxPendingElements (no one is scored: a genuine payment meets a
//     full set too). A refused transaction is applied when a block
//     confirms it.
//   - Transactions are stored without their witness (stripWitness): the
//     txid does not commit to it, a peer can pad any transaction with
//     megabytes of it, and nothing the wallet computes reads it.
//   - Unconfirmed false positives are counted once each and never
//     stored.
//   - Only blocks move Balance.Confirmed and Balance.Immature; the coins
//     unconfirmed transactions spend are shown as Balance.PendingSpent and
//     stay listed by UTXOs (flagged PendingSpend), and incoming outputs as
//     Balance.Unconfirmed.
//   - A relayed transaction never evicts another: conflicting pending
//     transactions (wtxmgr keeps a list of unconfirmed spenders per
//     outpoint) all stay, flagged (Balance.Conflicts,
//     TxSummary.Conflicts), counted in the worst case (their outputs are
//     not counted as incoming), until the block that confirms one evicts
//     the others.
//   - An unconfirmed transaction that has not confirmed MempoolExpiry (336
//     hours, Bitcoin Core's -mempoolexpiry) after it entered the set is
//     removed with its descendants, at Open, ApplyBlock or ApplyMempoolTx
//     (wallet clock); its outputs and guards leave the filter.
//
// # Reorgs
//
// Rollback follows wtxmgr: transactions of removed blocks return to the
// unconfirmed set until they confirm again, a confirmed double spend
// evicts them, or MempoolExpiry (counted from the rollback) passes.
package wallet
