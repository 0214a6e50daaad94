package podrunner

import "time"

// Back-off defaults of the kubelet for restarting a container that exited
// (pkg/kubelet: initial 10s, doubling, capped at 5 minutes; an entry older
// than twice the cap is forgotten, so a container that ran for 10 minutes
// starts over).
const (
	DefaultBackoffBase = 10 * time.Second
	DefaultBackoffMax  = 300 * time.Second
)

// crashBackoff is the kubelet's container restart back-off (flowcontrol.Backoff
// as kuberuntime's doBackOff uses it): the first exit restarts at once and
// sets the delay to base; every later exit waits the current delay, then
// doubles it up to max. When the exit comes more than 2*max after the
// previous one, the entry has expired and the sequence starts over.
type crashBackoff struct {
	base, max time.Duration
	cur       time.Duration
	last      time.Time // finish time of the previous exit
}

func newCrashBackoff(base, max time.Duration) *crashBackoff {
	if base <= 0 {
		base = DefaultBackoffBase
	}
	if max < base {
		max = base
	}
	return &crashBackoff{base: base, max: max}
}

// delay returns how long to wait before restarting a container that
// finished at finished.
func (b *crashBackoff) delay(finished time.Time) time.Duration {
	if b.cur != 0 && finished.Sub(b.last) > 2*b.max {
		b.cur = 0 // expired: as if never failed
	}
	b.last = finished
	if b.cur == 0 {
		b.cur = b.base
		return 0
	}
	d := b.cur
	b.cur *= 2
	if b.cur > b.max {
		b.cur = b.max
	}
	return d
}

// retryBackoff is the volume manager's retry of a failed mount
// (nestedpendingoperations: 500ms doubling to 2m2s).
type retryBackoff struct {
	cur time.Duration
}

const (
	retryInitial = 500 * time.Millisecond
	retryMax     = 2*time.Minute + 2*time.Second
)

func (r *retryBackoff) next() time.Duration {
	if r.cur == 0 {
		r.cur = retryInitial
		return r.cur
	}
	r.cur *= 2
	if r.cur > retryMax {
		r.cur = retryMax
	}
	return r.cur
}

func (r *retryBackoff) reset() { r.cur = 0 }
