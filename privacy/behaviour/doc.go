// Package behaviour runs the behaviour attack: what a peer learns from
// WHEN the client acts, not from what its filters hold. A light client that
// reloads its filter right after a payment, or fetches blocks again from
// the paying block, points at the wallet's blocks and transactions
// whatever its filter's false-positive rate. The attack uses only what a
// peer sees:
//
//   - reload timing: every filterload to a peer that held a filter is
//     set against what that peer sent just before it: the most recent
//     sending since that peer's previous filterload that carried a
//     transaction (a filtered block with a matched transaction, or
//     transactions relayed from its mempool). A sending without a
//     transaction cannot have changed the wallet, so it is passed over.
//     When that sending is one block of a run of several asked together
//     (a catch-up batch), the peer cannot tell which of them the client
//     had reached: the reload is counted as ambiguous and names nothing
//     (a peer that modelled the client's processing rate could do
//     better; the re-fetch that follows such a reload is the signal
//     there). Only reloads that added elements count: the observer's
//     estimate of the elements a reload added over the filter that peer
//     held (or, when the peer's own is of another tweak or hash count,
//     the latest filter of the reload's sent to any peer)
//     (replay.EstimateReload: the fold of nested sizes, else the net change)
//     must be at least pointingSigmas standard errors and
//     minPointingAdded above zero; the filter the peer held, sent again,
//     adds nothing; a reload whose estimate cannot be made (no earlier
//     filter of its tweak and hash count, a saturated union) counts.
//   - re-fetch start: every getdata run that asks a peer again for a
//     height it asked that peer before points at the first block of the
//     run in which that peer sent a transaction. A run that starts where
//     the peer's previous run ended continues it and starts nothing.
//
// Each pointer names a block (for a filtered block, or the block that
// later confirmed relayed transactions, once known) and the transactions
// the peer sent in it (or relayed). The suspects are judged against the
// candidates the filter alone leaves a peer: the blocks in which a peer
// sent at least one transaction and the transactions it sent. Their
// wallet share is the base rate: what naming candidates at random
// achieves. What the behaviour adds is the precision above it; a
// precision within the range of a random pick of as many candidates
// (hypergeometric, 95 %) means the behaviour told the peer nothing more
// than its filter did.
//
// An Attack takes the transcript records in order (Observe) and what each
// peer sent (Sent for the transactions of a filtered block, Relayed and
// RelayedByAll for mempool relays); Reading scores the suspects so far and
// Detail lists them. Analyze runs it offline: it rebuilds what each peer
// served from the transcript's getdata records and a chain, under the
// servers' relevance rules (ParseServerRules), and returns a Report that
// WriteReport prints. Tests hands the scores to the run's family of
// verdicts (stats.DecideFamily). The live meter of package privacy runs
// an Attack on what the client sent and received.
//
// The package is pure and synchronous.
package behaviour
