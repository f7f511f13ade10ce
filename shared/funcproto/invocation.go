package funcproto

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/web"
)

// MaxInvocationBytes bounds the invocation payload DecodeInvocation reads. Route-specific body
// limits are the app's own (http.MaxBytesReader works on the rebuilt request too).
const MaxInvocationBytes = 64 << 20

// InvocationRequest is the payload the host POSTs to /{FunctionName}.
type InvocationRequest struct {
	// Data holds one member per trigger and input binding, keyed by binding name, as sent
	// (possibly JSON-encoded more than once; the typed accessors undo that).
	Data map[string]json.RawMessage
	// Metadata is the trigger metadata.
	Metadata Metadata
}

// Metadata is the invocation's Metadata member.
type Metadata struct {
	// Sys is Metadata.sys.
	Sys SysMetadata
	// Fields holds every member of Metadata as sent, sys included.
	Fields map[string]json.RawMessage
}

// SysMetadata is Metadata.sys: the function's name, the host's clock and a random GUID.
type SysMetadata struct {
	MethodName string
	UtcNow     time.Time
	RandGuid   string
}

// DecodeInvocation reads and decodes an invocation payload of at most MaxInvocationBytes.
// Errors: *apperr.Error KindTooLarge code "invocation_too_large" beyond the limit; KindInvalid
// code "invalid_invocation" (field at fault named) for anything that is not an invocation.
func DecodeInvocation(r io.Reader) (*InvocationRequest, error) {
	return readInvocation(r, -1)
}

// readInvocation is DecodeInvocation of a payload of declared length (-1: unknown), read into
// one buffer of that length. Errors as DecodeInvocation's.
func readInvocation(r io.Reader, declared int64) (*InvocationRequest, error) {
	if declared > MaxInvocationBytes {
		return nil, apperr.New(apperr.KindTooLarge, "invocation_too_large", "the invocation is larger than %d bytes", MaxInvocationBytes)
	}
	b, err := web.ReadAll(io.LimitReader(r, MaxInvocationBytes+1), declared)
	if err != nil {
		return nil, apperr.Wrap(err, apperr.KindInvalid, CodeInvalidInvocation, "the invocation could not be read")
	}
	if len(b) > MaxInvocationBytes {
		return nil, apperr.New(apperr.KindTooLarge, "invocation_too_large", "the invocation is larger than %d bytes", MaxInvocationBytes)
	}
	return ParseInvocation(b)
}

// ParseInvocation decodes an invocation payload held in memory. Errors as DecodeInvocation.
func ParseInvocation(b []byte) (*InvocationRequest, error) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return nil, invalid("$", "the invocation is empty")
	}
	if !json.Valid(b) {
		return nil, invalid("$", "the invocation is not valid JSON")
	}
	top, err := objectFields(b, "$")
	if err != nil {
		return nil, err
	}
	data, err := objectFields(member(top, "Data"), "Data")
	if err != nil {
		return nil, err
	}
	meta, err := objectFields(member(top, "Metadata"), "Metadata")
	if err != nil {
		return nil, err
	}
	sys, err := decodeSys(member(meta, "sys"))
	if err != nil {
		return nil, err
	}
	return &InvocationRequest{Data: data, Metadata: Metadata{Sys: sys, Fields: meta}}, nil
}

func decodeSys(raw json.RawMessage) (SysMetadata, error) {
	m, err := objectFields(raw, "Metadata.sys")
	if err != nil {
		return SysMetadata{}, err
	}
	var s SysMetadata
	if s.MethodName, err = flexString(member(m, "MethodName"), "Metadata.sys.MethodName"); err != nil {
		return s, err
	}
	if s.UtcNow, err = flexTime(member(m, "UtcNow"), "Metadata.sys.UtcNow"); err != nil {
		return s, err
	}
	if s.RandGuid, err = flexString(member(m, "RandGuid"), "Metadata.sys.RandGuid"); err != nil {
		return s, err
	}
	return s, nil
}

// trigger finds the Data member for a binding: the named one, or else the only member.
func (in *InvocationRequest) trigger(name string) (json.RawMessage, string, error) {
	if in == nil {
		return nil, "", invalid("Data", "no invocation")
	}
	if name != "" {
		if v := member(in.Data, name); v != nil {
			return v, "Data." + name, nil
		}
	}
	if len(in.Data) == 1 {
		for k, v := range in.Data {
			return v, "Data." + k, nil
		}
	}
	names := make([]string, 0, len(in.Data))
	for k := range in.Data {
		names = append(names, k)
	}
	sort.Strings(names)
	if name == "" {
		return nil, "", invalid("Data", "has %d members %q; name the trigger binding", len(names), names)
	}
	return nil, "", invalid("Data."+name, "is missing (members: %q)", names)
}

// release lets go of the payload's bytes once the HTTP trigger's member at field is decoded
// into m: the Data members and Metadata fields are slices of the payload (objectFields),
// copied out of it here, and that member is m without its Body, which is the rebuilt request's
// body alone (read it from r.Body). A batch body of tens of MiB is then not held by the
// invocation as well while its handler runs.
func (in *InvocationRequest) release(field string, m map[string]json.RawMessage) {
	for k, v := range in.Data {
		if "Data."+k != field {
			in.Data[k] = bytes.Clone(v)
			continue
		}
		rest := make(map[string]json.RawMessage, len(m))
		for name, val := range m {
			if !strings.EqualFold(name, "Body") {
				rest[name] = val
			}
		}
		b, err := json.Marshal(rest) // values valid JSON (objectFields): it cannot fail
		if err != nil {
			b = []byte("{}")
		}
		in.Data[k] = b
	}
	for k, v := range in.Metadata.Fields {
		in.Metadata.Fields[k] = bytes.Clone(v)
	}
}

// InvocationResponse is the handler's reply to an invocation.
type InvocationResponse struct {
	// Outputs maps output binding names to values: "res" an *HTTPResponseData, a queue
	// binding one JSON object or an array of them.
	Outputs map[string]any `json:"Outputs"`
	// Logs are printed by the host with the function name and invocation id.
	Logs []string `json:"Logs"`
	// ReturnValue is the $return binding's value; this project leaves it null.
	ReturnValue any `json:"ReturnValue"`
}

// HTTPResponseData is the value of an http output binding.
type HTTPResponseData struct {
	StatusCode int               `json:"statusCode"`
	Headers    map[string]string `json:"headers"`
	Body       string            `json:"body"`
}

// Encode writes the response as JSON with empty Outputs and Logs spelled {} and [].
func (resp *InvocationResponse) Encode(w io.Writer) error {
	out := *resp
	if out.Outputs == nil {
		out.Outputs = map[string]any{}
	}
	if out.Logs == nil {
		out.Logs = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// writeInvocationResponse answers the host: status (2xx for success; anything else fails the
// invocation) with a JSON body in every case.
func writeInvocationResponse(w http.ResponseWriter, status int, resp *InvocationResponse) {
	var buf bytes.Buffer
	if err := resp.Encode(&buf); err != nil {
		// Outputs are pre-marshalled by AddOutput and res is plain data, so this is only
		// reachable through a ReturnValue that cannot encode: fail the invocation in JSON.
		buf.Reset()
		fallback := InvocationResponse{Logs: []string{"funcproto: the invocation response could not be encoded"}}
		_ = fallback.Encode(&buf)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

var errNoInvocation = errors.New("funcproto: the context carries no invocation")
