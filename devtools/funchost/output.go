package funchost

import (
	"strings"
	"sync"
)

// Output collects what the host and the handlers print (Options.Output), for a test that reads
// it back while the host runs. Safe for concurrent use; the zero value is ready.
type Output struct {
	mu sync.Mutex
	b  strings.Builder
}

// Write appends p.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// From is what was written from offset on (offset: an earlier Len), and the length now.
func (o *Output) From(offset int) (string, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	all := o.b.String()
	return all[min(offset, len(all)):], len(all)
}

// Len is how much has been written so far.
func (o *Output) Len() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Len()
}
