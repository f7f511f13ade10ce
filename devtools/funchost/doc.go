// Package funchost is a local Azure Functions host for Go custom handlers: it loads app folders
// (host.json, one folder per function with its function.json, and the handler executable),
// starts each app's handler, and speaks the custom-handler protocol from the host's side, as
// DESIGN section 2 and the wire contract describe:
//
//   - HTTP triggers on one listen address under each app's route prefix, with route templates,
//     methods, host keys (?code= or x-functions-key), forwarding for HTTP-only functions and
//     invocations (POST /{FunctionName}) for the others; an answer given before the request
//     body was read to its end (a handler's early 413, the invocation limit) says
//     Connection: close, so a kept-alive client never sends its next request into the old body;
//   - queue triggers with polling and back-off, batchSize, newBatchThreshold, visibilityTimeout,
//     DequeueCount, maxDequeueCount and <queue>-poison queues, and the shared queue watcher
//     (a message an app's function writes to a queue wakes that app's listener of it at once);
//   - timer triggers on six-field NCRONTAB schedules, runOnStartup, RunTimer and the admin
//     endpoint POST /admin/functions/{name};
//   - queue output bindings written only when the handler's reply is 2xx JSON;
//   - Logs from invocation replies printed as "[fn=<name> id=<invocationId>] <line>".
//
// The Azure Functions Core Tools cannot be installed everywhere; this host is how `make run` and
// the end-to-end tests run the packaged apps. It is a development tool: it favours clear errors over
// throughput and holds no state beyond its queues' storage account.
package funchost
