package joint

// Test helpers the external tests share.
var (
	JointElements = jointElements
	NewTestFilter = newTestFilter
	JointClose    = jointClose
)
