package experiments

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/bloomwatch/bloomwatch/bip37"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// A client simulator: it plays a light client's filter policy over a
// scenario (new keys, restarts, new peers) and writes the transcript a
// colluding set of full nodes would record. The experiments feed these
// transcripts to privacy.Analyze exactly as a real node's transcript.

// BitcoinjHeadroom is the capacity bitcoinj adds to the element count
// when it sizes a filter (M = 2N + 100; Gervais et al. 2014).
const BitcoinjHeadroom = 100

// BitcoinjFPRate is bitcoinj's default target false-positive rate.
const BitcoinjFPRate = 0.0005

// simEpoch is the fixed start time of simulated transcripts, so they are
// reproducible.
var simEpoch = time.Date(2015, time.January, 1, 0, 0, 0, 0, time.UTC)

// simPeerBase is the first simulated peer's port on the loopback address.
const simPeerBase = 18444

// Policy is a client's filter policy.
type Policy struct {
	Name   string
	FPRate float64
	// BothForms inserts each key's public key and its hash160 (bitcoinj);
	// otherwise only the hash160.
	BothForms bool
	// Headroom is added to the element count when sizing a filter.
	Headroom uint32
	// PersistentTweak keeps one tweak, and the capacity, for the wallet's
	// lifetime; otherwise every restart draws a new tweak and every
	// reload sizes the filter afresh for the current element count.
	PersistentTweak bool
	// FilterAdd sends new keys with filteradd while the filter has room;
	// otherwise new keys trigger a filterload.
	FilterAdd bool
	// Decoys are keys inserted beside the wallet's own, as if they were
	// the wallet's.
	Decoys []Key
	// Flags is the filters' update mode.
	Flags bip37.UpdateFlag
}

// StepKind names a scenario step.
type StepKind int

// The scenario steps.
const (
	// StepNewKeys makes the wallet start watching Count more keys.
	StepNewKeys StepKind = iota + 1
	// StepRestart restarts the client, which reloads its filter.
	StepRestart
	// StepNewPeer connects one more peer (one more colluding node).
	StepNewPeer
)

// Step is one scenario step at a chain height.
type Step struct {
	Kind   StepKind
	Height int32
	Count  int
}

// Scenario is a wallet's life as its peers see it.
type Scenario struct {
	Seed        uint64
	InitialKeys int
	Peers       int
	Steps       []Step
}

// simClient is the simulator's state.
type simClient struct {
	p        Policy
	keys     []Key
	used     int
	rng      *rand.Rand
	tweak    uint32
	capacity uint32
	filter   *bip37.Filter
	peers    []string
	records  []transcript.Record
	height   int32
}

// Simulate plays policy p over scenario sc for a wallet whose keys are
// keys (in derivation order) and returns the transcript.
func Simulate(p Policy, sc Scenario, keys []Key) ([]transcript.Record, error) {
	if sc.InitialKeys < 1 || sc.Peers < 1 || p.FPRate <= 0 || p.FPRate >= 1 {
		return nil, fmt.Errorf("%w: scenario needs a key, a peer and an FP rate in (0, 1)", ErrBadConfig)
	}
	need := sc.InitialKeys
	for _, s := range sc.Steps {
		if s.Kind == StepNewKeys {
			need += s.Count
		}
	}
	if need > len(keys) {
		return nil, fmt.Errorf("%w: scenario uses %d keys, wallet has %d", ErrBadConfig, need, len(keys))
	}
	c := &simClient{p: p, keys: keys, used: sc.InitialKeys, rng: rand.New(rand.NewPCG(sc.Seed, uint64(len(p.Name))))}
	c.tweak = c.rng.Uint32()
	for range sc.Peers {
		c.addPeer()
	}
	if err := c.reload(transcript.ReasonInitial, true); err != nil {
		return nil, err
	}
	for _, s := range sc.Steps {
		c.height = s.Height
		var err error
		switch s.Kind {
		case StepNewKeys:
			err = c.newKeys(s.Count)
		case StepRestart:
			if !p.PersistentTweak {
				c.tweak = c.rng.Uint32()
			}
			err = c.reload(transcript.ReasonRestart, !p.PersistentTweak)
		case StepNewPeer:
			c.addPeer()
			c.send(c.peers[len(c.peers)-1], transcript.Record{Kind: transcript.KindFilterLoad, Filter: c.filter.Serialize(), Reason: transcript.ReasonNewPeer})
		default:
			err = fmt.Errorf("%w: unknown step kind %d", ErrBadConfig, s.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	return c.records, nil
}

// addPeer connects a new loopback peer.
func (c *simClient) addPeer() {
	c.peers = append(c.peers, fmt.Sprintf("127.0.0.1:%d", simPeerBase+len(c.peers)))
}

// elements returns the filter's elements: the decoys, then the used keys
// in derivation order (so new keys are always at the end).
func (c *simClient) elements() [][]byte {
	var out [][]byte
	add := func(k Key) {
		out = append(out, k.Hash160)
		if c.p.BothForms {
			out = append(out, k.PubKey)
		}
	}
	for _, k := range c.p.Decoys {
		add(k)
	}
	for _, k := range c.keys[:c.used] {
		add(k)
	}
	return out
}

// reload builds the filter for the current elements and loads it on every
// peer. resize re-derives the capacity from the element count; otherwise
// the capacity is kept unless the elements outgrew it.
func (c *simClient) reload(reason string, resize bool) error {
	elems := c.elements()
	need := uint32(len(elems))
	if c.capacity != 0 && c.capacity < need {
		reason, resize = transcript.ReasonResize, true
	}
	if resize {
		c.capacity = need + c.p.Headroom
	}
	f, err := bip37.NewFilter(c.capacity, c.p.FPRate, c.tweak, c.p.Flags)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	for _, e := range elems {
		f.Add(e)
	}
	c.filter = f
	for _, peer := range c.peers {
		c.send(peer, transcript.Record{Kind: transcript.KindFilterLoad, Filter: f.Serialize(), Reason: reason})
	}
	return nil
}

// newKeys starts watching n more keys.
func (c *simClient) newKeys(n int) error {
	before := len(c.elements())
	c.used += n
	elems := c.elements()
	if c.p.FilterAdd && uint32(len(elems)) <= c.capacity {
		for _, e := range elems[before:] {
			c.filter.Add(e)
			for _, peer := range c.peers {
				c.send(peer, transcript.Record{Kind: transcript.KindFilterAdd, Data: e, Reason: transcript.ReasonNewKey})
			}
		}
		return nil
	}
	// A reload within a session keeps the tweak; bitcoinj-like clients
	// re-derive the capacity, persistent ones keep it while it fits.
	return c.reload(transcript.ReasonNewKey, !c.p.PersistentTweak)
}

// send appends a record for peer.
func (c *simClient) send(peer string, r transcript.Record) {
	r.Seq = uint64(len(c.records))
	r.Time = simEpoch.Add(time.Duration(r.Seq) * time.Second)
	r.Peer = peer
	r.Height = c.height
	c.records = append(c.records, r)
}
