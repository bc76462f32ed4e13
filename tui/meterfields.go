package tui

import "github.com/bloomwatch/bloomwatch/privacy"

// meterExtra are the privacy meter's figures of the corrected model: the
// independent-filters reference, where the universe comes from, the
// elements an observer estimates the last reload added, and the expected
// false-positive transactions per non-wallet transaction (the unit of
// the observed rate).
type meterExtra struct {
	ok             bool // a reading was read (false before the first)
	cf             bool // the reading is of a sync over BIP158 (Reading.CF)
	independentFP  float64
	universeSource string
	added          float64 // -1: not estimable
	addedErr       float64
	expectedTxFP   float64
	// observed is the client's observed false-positive rate per
	// non-wallet transaction with its 95 % interval (haveObserved false
	// before a transaction was tested).
	haveObserved           bool
	observedTxFP           float64
	observedLo, observedHi float64
}

// extraOf reads a reading's corrected-model figures (the source cleaned:
// it is drawn).
func extraOf(r privacy.Reading) meterExtra {
	x := meterExtra{ok: true, independentFP: r.IndependentFP, universeSource: cleanUpTo(r.UniverseSource, maxLogLen),
		added: r.AddedElements, addedErr: r.AddedStdErr, expectedTxFP: r.ExpectedTxFPRate, cf: r.CF != nil}
	if ci := r.ObservedTxFPCI; ci != nil && r.ObservedTxTested > 0 {
		x.haveObserved, x.observedTxFP, x.observedLo, x.observedHi = true, r.ObservedTxFPRate, ci.Lo, ci.Hi
	}
	return x
}
