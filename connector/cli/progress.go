package cli

import (
	"fmt"
	"strings"
	"sync"
)

// progress draws a bar on stderr when it is a terminal (nothing otherwise, so scripts and
// --output json see clean streams).
type progress struct {
	a     *app
	label string
	total int
	mu    sync.Mutex
	done  int
	on    bool
}

func (a *app) progress(label string, total int) *progress {
	return &progress{a: a, label: label, total: total, on: a.env.ProgressTTY && a.output == "text"}
}

func (p *progress) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done += n
	p.draw()
}

// set moves the bar to done.
func (p *progress) set(done int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if done != p.done {
		p.done = done
		p.draw()
	}
}

func (p *progress) draw() {
	if !p.on || p.total <= 0 {
		return
	}
	const width = 30
	filled := min(width, p.done*width/p.total)
	fmt.Fprintf(p.a.env.Stderr, "\r%s [%s%s] %d/%d", p.label, strings.Repeat("#", filled), strings.Repeat(" ", width-filled), p.done, p.total)
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.on && p.total > 0 {
		fmt.Fprintln(p.a.env.Stderr)
	}
}
