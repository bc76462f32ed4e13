// Package joint computes the joint false-positive rate of a set of BIP37
// filters: the probability that a random non-member passes every one of
// them, with the correlations that shared hash seeds create. An adversary
// holding every filter a wallet sent (after reloads, to several peers)
// intersects them; the joint rate is how many strangers that intersection
// still lets through, and the independent product of the filters' own
// rates can be wrong by orders of magnitude when tweaks repeat.
//
// Build a Joint with NewJoint, Add each filter (Update replaces one after
// a filteradd), and read Rate for a one-form candidate, AllFormsRate and
// AnyFormRate for candidates of several forms, or FormsRate for a mix of
// the two; RateBounds carries bounds where the exact table would be too
// large (over MaxExactFormsFilters filters). JointRate and IndependentRate
// are the one-shot forms. The meter, the analyzer and the on-path
// observer of package privacy read their rates here.
package joint
