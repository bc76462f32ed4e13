package privacy

import (
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
