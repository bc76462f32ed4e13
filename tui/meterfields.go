package tui

import "github.com/bloomwatch/bloomwatch/privacy"

// meterExtra are the privacy meter's figures of the corrected model: the
// independent-filters reference, where the universe comes from, the
// elements an observer estimates the last reload added, and the expected
// false-positive transactions per non-wallet transaction (the unit of
// the observed rate).
type meterExtra struct {
	ok             bool // the meter reports them
	independentFP  float64
	universeSource string
	added          float64 // -1: not estimable
	addedErr       float64
	expectedTxFP   float64
}

// extraOf reads a reading's corrected-model figures. This build's
// privacy.Reading does not carry them yet (the privacy meter is being
// corrected): ok is false and the panels leave them out.
func extraOf(privacy.Reading) meterExtra {
	return meterExtra{added: -1, addedErr: -1}
}
