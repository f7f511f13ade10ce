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
