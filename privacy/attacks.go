package privacy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bloomwatch/bloomwatch/transcript"
)

// Names ParseAttacks accepts beside the stage names (StageBothForms,
// StageIntersection, StageGraph, StageSaturation, StageBehaviour;
// StageSingle, which always runs, adds nothing).
const (
	// AttacksAll is every attack (AllAttacks).
	AttacksAll = "all"
	// AttacksAuto is both-forms and intersection, plus graph,
	// saturation and behaviour when a chain is available.
	AttacksAuto = "auto"
	// AttacksNone is the single-filter test alone.
	AttacksNone = "none"
)

// Errors of ParseAttacks; test for them with errors.Is.
var (
	// ErrUnknownAttack is returned for a name ParseAttacks does not know.
	ErrUnknownAttack = errors.New("unknown attack")
	// ErrAttackNeedsChain is returned when graph, saturation or
	// behaviour is asked for without a chain.
	ErrAttackNeedsChain = errors.New("graph, saturation and behaviour need the chain")
)

// ParseAttacks parses a comma-separated list of attack names: the stage
// names both-forms, intersection, graph, saturation and behaviour, or
// all, none and auto (see AttacksAuto), combined. chain says whether the
// analysis has a Chain, which graph, saturation and behaviour need.
func ParseAttacks(list string, chain bool) (Attacks, error) {
	var a Attacks
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case AttacksAuto:
			a.BothForms, a.Intersection = true, true
			a.Graph, a.Saturation, a.Behaviour = a.Graph || chain, a.Saturation || chain, a.Behaviour || chain
		case AttacksAll:
			a = AllAttacks()
		case AttacksNone, StageSingle:
		case StageBothForms:
			a.BothForms = true
		case StageIntersection:
			a.Intersection = true
		case StageGraph:
			a.Graph = true
		case StageSaturation:
			a.Saturation = true
		case StageBehaviour:
			a.Behaviour = true
		default:
			return a, fmt.Errorf("%w %q (want both-forms, intersection, graph, saturation, behaviour, all, none or auto)", ErrUnknownAttack, name)
		}
	}
	if (a.Graph || a.Saturation || a.Behaviour) && !chain {
		return a, ErrAttackNeedsChain
	}
	return a, nil
}

// LastLoadHeight returns the height of the transcript's last filterload,
// or -1 (the tip) when it has none: the height at which the outpoints a
// BLOOM_UPDATE_ALL wallet inserted are read (element.ChainOutpointUniverse)
// unless told otherwise.
func LastLoadHeight(records []transcript.Record) int32 {
	for i := len(records) - 1; i >= 0; i-- {
		if records[i].Kind == transcript.KindFilterLoad {
			return records[i].Height
		}
	}
	return -1
}

// StageBehaviour names the behaviour attack among the analyzer's stages
// (ParseAttacks, Report.Behaviour).
const StageBehaviour = "behaviour"
