package spv

import (
	"fmt"
	"github.com/stretchr/testify/require"
	"testing"
	"time"
)

// waitBound is how long a test waits for something the code under test
// must do at once (an event already published, a goroutine's answer):
// long enough for a loaded machine, short of go test's 10-minute panic.
const waitBound = 30 * time.Second

// recv receives from ch, failing the test after waitBound with what it
// waited for. ok is false when ch was closed.
func recv[T any](t testing.TB, ch <-chan T, what string) (v T, ok bool) {
	t.Helper()
	select {
	case v, ok = <-ch:
		return v, ok
	case <-time.After(waitBound):
		require.FailNow(t, fmt.Sprintf("no %s within %v", what, waitBound))
		return v, false
	}
}

// waitEvent returns the first event of sub that match accepts, failing
// the test after waitBound or when the subscription ends without one.
func waitEvent(t testing.TB, sub *Subscription, what string, match func(Event) bool) Event {
	t.Helper()
	deadline := time.After(waitBound)
	for {
		select {
		case ev, ok := <-sub.Events():
			require.True(t, ok, "the events ended without %s", what)
			if match(ev) {
				return ev
			}
		case <-deadline:
			require.FailNow(t, fmt.Sprintf("no %s within %v", what, waitBound))
		}
	}
}
