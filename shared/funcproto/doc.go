// Package funcproto is the handler's side of the Azure Functions custom-handler protocol: it
// decodes the invocation payloads the Functions host POSTs to /{FunctionName}, runs the app's
// ordinary handlers on them, and encodes the invocation response the host expects. The host's
// side (the local Functions host) lives in devtools/funchost; both follow the same contract.
//
// # Documented (learn.microsoft.com, "Azure Functions custom handlers")
//
//   - Functions whose only bindings are one httpTrigger and one http output are forwarded as
//     plain HTTP, at their /api/... path, when host.json sets
//     customHandler.enableForwardingHttpRequest; everything else is an invocation: a POST to
//     /{FunctionName} with {"Data":{...},"Metadata":{...}}, where Data holds one member per
//     trigger or input binding (keyed by binding name) and Metadata the trigger metadata plus
//     "sys" (MethodName, UtcNow, RandGuid).
//   - The documented queue example carries the message as a JSON string of its text and
//     "DequeueCount":1 as a number.
//   - The reply is {"Outputs":{...},"Logs":[...],"ReturnValue":...}; an HTTP output binding is an
//     object with statusCode, headers and body. The host prints each Logs line.
//   - The host pings GET / until it answers; any response means ready.
//
// # Observed (host source, issues, and the local host's defaults)
//
//   - The host only writes outputs when the handler replies 2xx with JSON (it calls
//     EnsureSuccessStatusCode before reading Outputs), so a client error is answered 200 with
//     Outputs.res.statusCode 4xx, and this package drops queue outputs unless res is 2xx.
//   - The host's converter (HttpMessageConversionExtensions in azure-functions-host) sends
//     Data.req.Query as a JSON *string* holding an object whose multi-values are joined by ",";
//     Headers as an object whose values are arrays; Body as the body text, or as bytes (base64
//     in JSON) when the Content-Type is application/octet-stream or contains "multipart/".
//     Other hosts and versions send the body as a parsed JSON object.
//   - Queue messages arrive JSON-encoded twice, DequeueCount as a string ("1"), and Id,
//     PopReceipt and the times with embedded quotes (MicrosoftDocs/azure-docs#103508; Go
//     libraries such as KarlGW/azfunc trim the quotes).
//   - The host adds X-Azure-Functions-InvocationId to every request it sends the handler.
//
// # Tolerant decoding rules (DecodeInvocation, HTTPRequest, QueueMessage, Timer)
//
//   - Any member that should be an object (Data, Metadata, Data.req, Data.timer, Query,
//     Headers, Params) may also be a JSON string holding that object, nested up to four times.
//   - Query: an object (values strings, arrays or scalars), a string holding such an object, or
//     a raw query string ("a=1&b=2", with or without "?"). Absent or null: the query of Url.
//   - Headers: values arrays, strings or scalars; keys canonicalised.
//   - Params: values strings or scalars; absent or null gives an empty map.
//   - Body: absent or null is empty; a JSON object, array, number or boolean is the compact
//     JSON text the host gave (key order kept); a JSON string is the body text, except when the
//     request's Content-Type is binary, when the string must be base64 (padded or not) and is
//     decoded. Binary means any type other than: no Content-Type, text/*, a type naming json
//     or xml (application/json, */*+json, application/x-ndjson, application/xml, */*+xml),
//     application/x-www-form-urlencoded, application/javascript. This is wider than the host's own rule (octet-stream and
//     multipart) so that images and PDFs are binary too; a binary body that is not base64 is
//     invalid_invocation (field Body). A body that the host parsed as an object cannot be
//     recovered byte for byte: routes that check a signature over the raw body must be
//     forwarded, not invoked.
//   - Queue message: the Data member unwrapped while it is a JSON string whose text is itself
//     valid JSON (at most four layers); a JSON object given directly is taken as is; text that
//     is not JSON is the body as it stands.
//   - DequeueCount: a number, a string holding a number, or a quoted string holding one.
//   - Id, PopReceipt, MethodName, RandGuid: strings with any number of embedded quote layers
//     removed.
//   - Times: RFC 3339 with any fraction (also the .NET seven-digit form), with or without
//     embedded quotes; a time without a zone is UTC; "M/D/YYYY h:mm:ss [AM|PM] [+hh:mm]" is
//     accepted; null or "" is the zero time.
//
// Every decoding failure is an *apperr.Error of KindInvalid with code "invalid_invocation"
// naming the field at fault; nothing here panics on input (FuzzDecodeInvocation checks this).
//
// # Adapters
//
// HTTPInvocation rebuilds an *http.Request from Data.req and runs an ordinary http.Handler;
// QueueHandler and TimerHandler run plain functions. Handlers add output bindings with
// AddOutput and log lines for the host with Logf, both through the request context. Router maps
// /{FunctionName} POSTs to adapters, answers GET / for readiness and passes the rest (forwarded
// /api/... requests) to the app's handler. Invocation paths never start with /api, so a
// forwarded caller cannot reach an invocation endpoint through the host.
package funcproto
