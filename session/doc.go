// Package session runs one sync of a watch-only wallet: it opens or creates
// the wallet, lays out its data dir, opens the light node on it, runs the
// one bridge goroutine that feeds the live privacy meter (and a dashboard,
// when there is one) from the node's events, decides when the sync is done
// (the tip reached with UntilSynced, a failure, no peer for PeerTimeout),
// and reports the end state as a Summary, the one JSON shape of
// `bloomwatch sync --json`, which the bench and the reliability tests read
// too.
//
// Data flows one way:
//
//	peers -> spv.Node (sync loop) -> wallet (relevance, persistence)
//	      -> spv events ---------------> Session bridge -> dashboard
//	spv transcript record (in FilterLoaded, BlocksRequested) -> privacy.Meter -> readings
//	what peers sent (BlockMatches, MatchedTx) -> privacy.Meter (behaviour attack)
//	wallet.Changes (one read per batch of events) -> meter counts, dashboard
//
// The bridge polls nothing: the node's events carry what it needs (the
// filter's figures, the transactions tested, the peers, the failure that
// stops a sync), and after a batch of events that may have changed the
// wallet (the events of about 100 ms) it reads the wallet's changes once,
// for the meter's counts and the dashboard's wallet panel alike.
//
// The transcript file is read once, by the node, when it opens; the meter
// gets the earlier records from the node (spv.Node.Transcript), folded at
// once (privacy.Meter.Restore), and each new one from its FilterLoaded or
// BlocksRequested event, whose record carries the filter the node built
// (never decoded again).
//
// Events: Session.Events is the node's event stream (FilterLoaded with the
// transcript record, MatchedTx with why it matched, BlockProcessed,
// SyncDone, Reorg, PeerBanned, ...). Without a dashboard it is a
// subscription queued without bound, made at the first call: take it
// between New and Start to miss nothing (Example_events); session.Run
// starts the session itself, so a Driver that takes it sees only what
// follows. Readings (the meter's) and WalletChanges go to a dashboard
// only; Summary and Reading give the latest.
//
// A data dir holds the wallet (wallet.db), the light node's state in
// NodeDir (headers, transcript.jsonl, bans.json, filter.json) and, under a
// dashboard, the log (LogFile).
package session
