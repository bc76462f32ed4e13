package spv

import "time"

// timeSource tells the node the time and wakes it up later. It has the shape of
// lnd's clock.Clock, so lnd's clock.NewTestClock drives a node in tests.
type timeSource interface {
	// Now returns the current time.
	Now() time.Time
	// TickAfter returns a channel that receives once d has passed.
	TickAfter(d time.Duration) <-chan time.Time
}

// systemClock is the real time.
type systemClock struct{}

// Now implements Clock.
func (systemClock) Now() time.Time { return time.Now() }

// TickAfter implements Clock.
func (systemClock) TickAfter(d time.Duration) <-chan time.Time { return time.After(d) }

var _ timeSource = systemClock{}
