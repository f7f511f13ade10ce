// Package jobkit is what every processor job package shares and none owns: the shape of a job's
// function table (Function) and the one way the workflow jobs read the workflow their message
// names (Workflow). It imports no job package, so that no job package imports another.
package jobkit

import "net/http"

// Function is one queue or timer function: its folder name under processor/functions (a
// constant of the job package) and its invocation handler (funcproto.QueueHandler or
// TimerHandler). Each job package's Functions method lists its own.
type Function struct {
	Name    string
	Handler http.Handler
}
