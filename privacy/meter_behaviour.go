package privacy

import (
	"time"

	"github.com/bloomwatch/bloomwatch/privacy/behaviour"
	"github.com/bloomwatch/bloomwatch/transcript"
)

// behaviourRefreshEvery is how many sendings (or requests) the meter
// lets pass before it recomputes its behaviour reading on its own; a
// filterload, or Settle, recomputes it at once.
const behaviourRefreshEvery = 64

// meterBehaviour is the live meter's behaviour attack: the same
// Behaviour the analyzer runs, fed the records the client sends and what
// its peers sent it, with the client's own verdicts as the truth.
type meterBehaviour struct {
	b      *behaviour.Attack
	active bool // a request or a sending was observed
	loaded bool // a filterload came since the cached reading
	cached *behaviour.Reading
}

// attack returns the behaviour attack, created on first use.
func (mb *meterBehaviour) attack() *behaviour.Attack {
	if mb.b == nil {
		mb.b = behaviour.NewAttack(true)
	}
	return mb.b
}

// observe feeds a record the meter accepted.
func (mb *meterBehaviour) observe(r transcript.Record) {
	if err := mb.attack().Observe(r); err != nil {
		return // unreachable: the meter refused it first
	}
	switch r.Kind {
	case transcript.KindGetData:
		mb.active = true
	case transcript.KindFilterLoad:
		mb.loaded = true
	}
}

// reading returns the cached reading, recomputed when a filterload came
// since, when behaviourRefreshEvery changes piled up, or when forced;
// nil while nothing was requested or sent.
func (mb *meterBehaviour) reading(force bool) *behaviour.Reading {
	if !mb.active {
		return nil
	}
	b := mb.attack()
	if mb.cached == nil || (b.Changes() > 0 && (force || mb.loaded || b.Changes() >= behaviourRefreshEvery)) {
		r := b.Reading()
		mb.cached, mb.loaded = &r, false
	}
	return mb.cached
}

// ObserveSent feeds one transaction a peer sent the client: in the
// filtered block at height, or relayed from its mempool (height -1) at
// time at, which every peer holding a filter is taken to have announced
// (behaviour.Attack.RelayedByAll). tx.Wallet is the client's own verdict (relevant, not a false
// positive), false when not judged yet: a transaction fed again with
// Wallet set becomes the wallet's. The behaviour attack
// (Reading.Behaviour) sets what the peers sent against the client's
// reloads and requests, as the peer would; the reading is refreshed at
// the next filterload, every behaviourRefreshEvery sendings, or by
// Settle.
func (m *Meter) ObserveSent(at time.Time, peer string, height int32, tx behaviour.SentTx) {
	m.behave.active = true
	b := m.behave.attack()
	if height >= 0 {
		b.Sent(peer, height, []behaviour.SentTx{tx})
		return
	}
	b.RelayedByAll(at, []behaviour.SentTx{tx})
}

// Settle returns the current reading with the behaviour attack
// recomputed from everything observed (Current may show one a few
// sendings old).
func (m *Meter) Settle() Reading {
	m.behave.reading(true)
	return m.Current()
}
