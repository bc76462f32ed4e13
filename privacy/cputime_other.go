//go:build !unix

package privacy

import "time"

// processCPU returns 0: the OS does not say.
func processCPU() time.Duration { return 0 }
