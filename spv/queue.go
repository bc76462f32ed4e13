package spv

import "sync"

// eventQueue is an unbounded FIFO between one producer that must never
// block (the manager) and one consumer that may be arbitrarily slow (a
// subscriber). push appends under a mutex and never waits; one goroutine
// moves events from the slice to the consumer's channel.
type eventQueue struct {
	mu     sync.Mutex
	items  []Event
	head   int
	closed bool

	wake chan struct{} // capacity 1: "items may be non-empty"
	out  chan Event
	quit chan struct{}
	done chan struct{}
	once sync.Once
}

// queueCompactMin is the number of consumed slots after which the backing
// slice is compacted, so a long-lived queue does not keep every event it
// ever held.
const queueCompactMin = 1024

// newEventQueue returns a started queue.
func newEventQueue() *eventQueue {
	q := &eventQueue{
		wake: make(chan struct{}, 1),
		out:  make(chan Event),
		quit: make(chan struct{}),
		done: make(chan struct{}),
	}
	go q.run()
	return q
}

// push appends e. It never blocks and reports false when the queue was
// stopped (the event is dropped).
func (q *eventQueue) push(e Event) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.items = append(q.items, e)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return true
}

// len returns the number of events waiting.
func (q *eventQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// pop removes the oldest event.
func (q *eventQueue) pop() (Event, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		return nil, false
	}
	e := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head >= queueCompactMin && q.head*2 >= len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	return e, true
}

// run delivers events in order until stop. It closes out when it ends.
func (q *eventQueue) run() {
	defer close(q.done)
	defer close(q.out)
	for {
		e, ok := q.pop()
		if !ok {
			select {
			case <-q.wake:
				continue
			case <-q.quit:
				return
			}
		}
		select {
		case q.out <- e:
		case <-q.quit:
			return
		}
	}
}

// stop ends the queue: later pushes are dropped, the consumer's channel is
// closed, waiting events are discarded. It waits for the goroutine and is
// idempotent.
func (q *eventQueue) stop() {
	q.once.Do(func() {
		q.mu.Lock()
		q.closed = true
		q.items, q.head = nil, 0
		q.mu.Unlock()
		close(q.quit)
	})
	<-q.done
}

// Subscription is one subscriber's stream of node events. Events arrive in
// the order the node produced them through an unbounded queue, so a slow
// reader never stalls the sync; it only costs memory.
type Subscription struct {
	q      *eventQueue
	cancel func(*Subscription)
}

// Events returns the channel events arrive on. It is closed after Cancel
// and when the node stops.
func (s *Subscription) Events() <-chan Event { return s.q.out }

// Pending returns the number of events queued but not yet read.
func (s *Subscription) Pending() int { return s.q.len() }

// Cancel ends the subscription and closes its channel. Events not yet read
// are discarded. It is safe to call more than once and from any goroutine.
func (s *Subscription) Cancel() {
	if s.cancel != nil {
		s.cancel(s)
	}
	s.q.stop()
}

// broadcaster fans events out to subscriptions.
type broadcaster struct {
	mu     sync.Mutex
	subs   map[*Subscription]struct{}
	closed bool
}

// newBroadcaster returns an empty broadcaster.
func newBroadcaster() *broadcaster {
	return &broadcaster{subs: make(map[*Subscription]struct{})}
}

// subscribe adds a subscription. After close it returns one whose channel
// is already closed.
func (b *broadcaster) subscribe() *Subscription {
	s := &Subscription{q: newEventQueue(), cancel: b.remove}
	b.mu.Lock()
	closed := b.closed
	if !closed {
		b.subs[s] = struct{}{}
	}
	b.mu.Unlock()
	if closed {
		s.q.stop()
	}
	return s
}

// remove forgets s.
func (b *broadcaster) remove(s *Subscription) {
	b.mu.Lock()
	delete(b.subs, s)
	b.mu.Unlock()
}

// publish queues e for every subscription; it never blocks.
func (b *broadcaster) publish(e Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		s.q.push(e)
	}
}

// close stops every subscription; later subscribers get closed channels.
func (b *broadcaster) close() {
	b.mu.Lock()
	subs := b.subs
	b.subs = make(map[*Subscription]struct{})
	b.closed = true
	b.mu.Unlock()
	for s := range subs {
		s.q.stop()
	}
}
