package tablestore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
)

// batchFailure is what a failed entity-group transaction reported.
type batchFailure struct {
	index  int    // failing operation, -1 if unknown
	status int    // its HTTP status
	code   string // its service error code
}

// parseBatchFailure reads the failing operation from a transaction error. The SDK reports a
// failed batch as a ResponseError of the outer 202 without a code; the real answer is the one
// inner HTTP response of the multipart body with a 4xx status, whose JSON error message starts
// with the operation's index ("1:The update condition specified in the request was not
// satisfied."). A batch refused as a whole is a plain JSON error.
func parseBatchFailure(re *azcore.ResponseError) batchFailure {
	f := batchFailure{index: -1, status: re.StatusCode, code: re.ErrorCode}
	if re.RawResponse == nil {
		return f
	}
	body, err := runtime.Payload(re.RawResponse)
	if err != nil || len(body) == 0 {
		return f
	}
	if body[0] == '{' {
		f.code, f.index = odataError(body)
		return f
	}
	for off := 0; ; {
		i := bytes.Index(body[off:], []byte("HTTP/1.1 "))
		if i < 0 {
			return f
		}
		off += i
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(body[off:])), nil)
		off += len("HTTP/1.1 ")
		if err != nil || resp.StatusCode < 400 {
			continue
		}
		f.status = resp.StatusCode
		if c := resp.Header.Get("x-ms-error-code"); c != "" {
			f.code = c
		}
		rest := body[off:]
		if j := bytes.IndexByte(rest, '{'); j >= 0 {
			code, idx := odataError(rest[j:])
			if code != "" {
				f.code = code
			}
			f.index = idx
		}
		return f
	}
}

// odataError reads {"odata.error":{"code":…,"message":{"value":"<index>:…"}}} from the start of
// b (trailing bytes are ignored).
func odataError(b []byte) (code string, index int) {
	var v struct {
		OData struct {
			Code    string `json:"code"`
			Message struct {
				Value string `json:"value"`
			} `json:"message"`
		} `json:"odata.error"`
	}
	index = -1
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&v); err != nil {
		return "", -1
	}
	if n, _, ok := strings.Cut(v.OData.Message.Value, ":"); ok {
		if i, err := strconv.Atoi(n); err == nil {
			index = i
		}
	}
	return v.OData.Code, index
}
