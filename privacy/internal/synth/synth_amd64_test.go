package synth

// setAVX2 sets whether CandidateWords uses its AVX2 generator (never on
// when the CPU lacks it) and returns a function restoring the previous
// setting.
func setAVX2(on bool) (restore func()) {
	old := useAVX2
	useAVX2 = on && hasAVX2()
	return func() { useAVX2 = old }
}
