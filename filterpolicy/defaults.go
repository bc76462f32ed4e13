package filterpolicy

// Defaults of the light node's filter and request policy. The node's
// Config falls back to them; the simulators (privacy/experiments) and the
// bench model the same client with them.
const (
	// DefaultFPRate is the filter's false-positive target at its
	// capacity. The capacity is at least twice the element count (see
	// FilterCapacity), so at the load the real rate is far lower (about
	// 1e-7 at half capacity with the k that 1e-4 gives). 1e-4 keeps the
	// false positives of a 1,000-block, 10,000-transaction sync in single
	// digits (below 5 % of a 20-address wallet's matches) at a few hundred
	// bytes; a privacy-minded user raises it (more cover, more bandwidth),
	// which the privacy meter quantifies.
	DefaultFPRate = 0.0001

	// DefaultReloadFPRatio is the factor over DefaultFPRate at which the
	// predicted rate of a peer's filter (the local mirror of the server's
	// UPDATE_ALL insertions) triggers a reload.
	DefaultReloadFPRatio = 10

	// DefaultWindow is the number of blocks in flight or waiting for
	// delivery ahead of the watcher: two of the node's getdata batches
	// (spv.DefaultBatchSize). It shapes the requests a peer sees (a
	// reload re-fetches the window), which the request simulators model.
	// Enough to keep a
	// remote peer busy across a round trip (a merkle block costs a
	// server about a millisecond), small enough to bound what a filter
	// reload throws away (every block in flight is fetched again).
	DefaultWindow = 500
)
