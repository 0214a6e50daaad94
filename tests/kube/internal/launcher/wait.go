// How a launcher waits on its children and turns their ends into its own.

package launcher

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// childExit: a component exited (the launcher goes down with it).
type childExit struct{ c *child }

func (e *childExit) Error() string { return fmt.Sprintf("%s exited: %s", e.c.name, e.c.reason()) }

var errSignal = errors.New("signal")

// waitFor polls cond every 250ms until it holds, a child exits, a signal
// arrives or timeout (0 = none) passes.
func waitFor(ctx context.Context, timeout time.Duration, kids []*child, cond func() bool) error {
	var deadline <-chan time.Time
	if timeout > 0 {
		deadline = time.After(timeout)
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return nil
		}
		for _, k := range kids {
			select {
			case <-k.done:
				return &childExit{c: k}
			default:
			}
		}
		select {
		case <-ctx.Done():
			return errSignal
		case <-deadline:
			return fmt.Errorf("timed out after %s", timeout)
		case <-tick.C:
		}
	}
}

// finish stops everything and turns why into the exit code: 0 on a signal,
// 1 when a component exited or a step failed (k3s dies with its components).
func finish(why error, events *stateFile, stopAll func(), exit func(int, string) int) int {
	if errors.Is(why, errSignal) {
		events.event("stopping", nil)
		infof("Received shutdown signal, stopping components")
		stopAll()
		return exit(0, "signal")
	}
	var ce *childExit
	if errors.As(why, &ce) {
		fatalf("%s exited: %s", ce.c.name, ce.c.reason())
	} else {
		fatalf("%v", why)
	}
	stopAll()
	return exit(1, why.Error())
}
