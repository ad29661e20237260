package celproof

import (
	"encoding/json"
	"runtime"
	"sync/atomic"
)

// slots bounds the judgements running in the background across the process: one per processor.
// A caller waiting for a judgement that no slot has taken yet makes it itself, so waiting never
// idles while work is left.
var slots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))

// pending is one judgement, made once by whichever goroutine takes it first.
type pending struct {
	j      *Judge
	c      Change
	taken  atomic.Bool
	done   chan struct{}
	result Result
}

// Start begins judging c in the background, so that a caller walking a schema can go on while
// the change is judged; Judge(c) later waits for the result. Starting a change twice, or one
// already judged, does nothing.
func (j *Judge) Start(c Change) {
	p := j.pending(c)
	if p.taken.Load() {
		return
	}
	go func() {
		slots <- struct{}{}
		defer func() { <-slots }()
		p.run()
	}()
}

// pending is the entry of c: the same for every version sharing the judge. A change that cannot
// be keyed gets an entry of its own.
func (j *Judge) pending(c Change) *pending {
	key, err := json.Marshal(c)
	if err != nil {
		return &pending{j: j, c: c, done: make(chan struct{})}
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	p, ok := j.results[string(key)]
	if !ok {
		p = &pending{j: j, c: c, done: make(chan struct{})}
		j.results[string(key)] = p
	}
	return p
}

// run makes the judgement unless another goroutine has taken it.
func (p *pending) run() {
	if p.taken.CompareAndSwap(false, true) {
		p.result = p.j.judge(p.c)
		close(p.done)
	}
}

// wait returns the judgement, making it here if nobody has started it.
func (p *pending) wait() Result {
	p.run()
	<-p.done
	return p.result
}
