// Package replay rebuilds, from a transcript of the BIP37 messages a
// wallet sent, every filter state each peer held: what an adversary
// holding the transcript works from. Replay turns the records into a
// Timeline of events, the generations (one filterload and the filteradds
// that followed it on the same peer) and the distinct filter states, and
// notes the records a node would punish or ignore.
//
// EstimateReload compares a reload with an earlier filter of the same
// tweak and hash count, as an observer does, and MatchesAll tells the
// filters that match everything and so tell the adversary nothing. The
// analyzer, the meter, the behaviour attack and the on-path observer of
// package privacy and its sub-packages all read transcripts through here.
package replay
