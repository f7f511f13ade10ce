package conformance

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/esign-svc/esign/devtools/funchost"
)

// TestEarlyAnswerLeavesTheConnectionUsable: when the host answers before it has read the whole
// request body (the handler of a forwarded route answered 413 early, the host's own invocation
// limit, a missing key), the next request on the same kept-alive connection must not fail. The
// host either drains the rest of the body and keeps the connection, or answers with
// Connection: close and closes it; an answer that keeps the connection open without draining
// would have the client's next request read as the old body's tail, or find the connection
// closed under it.
func TestEarlyAnswerLeavesTheConnectionUsable(t *testing.T) {
	t.Parallel()
	e, err := tryStartOpts(t, funchost.Options{Apps: []string{httpApp(t)}, MaxInvocationBody: 64 << 10},
		map[string]string{"OUT_QUEUE": queueName("early")})
	if err != nil {
		t.Fatal(err)
	}
	guid := "3f2504e0-4f89-41d3-9a0c-0305e82c3301"
	tests := []struct {
		name    string
		path    string
		hdr     string // extra request header line
		size    int
		chunked bool
		status  int
		// close: the answer must say Connection: close. The host reads a forwarded body as the
		// handler's connection takes it, so a body the socket buffers between them could hold
		// might be read to its end after all; 16 MiB cannot be.
		close bool
	}{
		{"forwarded, handler answers early, large body", "/api/items/7", "X-Answer-Early: 1", 16 << 20, false, 413, true},
		{"forwarded, handler answers early, large chunked body", "/api/items/7", "X-Answer-Early: 1", 16 << 20, true, 413, true},
		{"forwarded, handler answers early, small body", "/api/items/7", "X-Answer-Early: 1", 8 << 10, false, 413, false},
		{"forwarded, handler reads it all", "/api/items/7", "", 1 << 20, false, 200, false},
		{"invoked, over the host's limit", "/api/p/9", "", 1 << 20, false, 413, true},
		{"invoked, within the host's limit", "/api/p/9", "X-Mode: statusstr", 60 << 10, false, 202, false},
		{"keyed route without its key, large body", "/api/keyed/" + guid, "", 1 << 20, false, 401, true},
		{"keyed route without its key, small body", "/api/keyed/" + guid, "", 8 << 10, false, 401, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			conn, err := net.Dial("tcp", strings.TrimPrefix(e.h.URL(), "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
			br := bufio.NewReader(conn)
			wrote := make(chan error, 1)
			go func() { wrote <- writeRequest(conn, tc.path, tc.hdr, tc.size, tc.chunked) }()
			first, body, err := readAnswer(br)
			if err != nil {
				t.Fatalf("first answer: %v", err)
			}
			if first.StatusCode != tc.status {
				t.Fatalf("first answer %d %q, want %d", first.StatusCode, body, tc.status)
			}
			if first.Close {
				// The host must then close the connection: what it has not read is never parsed.
				_ = <-wrote // ends with the close when the host stopped reading
				if n, err := io.Copy(io.Discard, br); err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) || n != 0 {
					t.Fatalf("after Connection: close: %d more bytes, %v", n, err)
				}
				return
			}
			if tc.close {
				t.Fatalf("%d answered without Connection: close with %d bytes of body unread", first.StatusCode, tc.size)
			}
			if err := <-wrote; err != nil {
				t.Fatalf("writing the first body: %v", err)
			}
			if _, err := fmt.Fprintf(conn, "GET /api/items/8 HTTP/1.1\r\nHost: funchost\r\n\r\n"); err != nil {
				t.Fatalf("second request: %v", err)
			}
			second, body, err := readAnswer(br)
			if err != nil {
				t.Fatalf("second request on the same connection: %v", err)
			}
			if second.StatusCode != 200 || second.Header.Get("X-Seen-Path") != "/api/items/8" {
				t.Fatalf("second answer %d %v %q", second.StatusCode, second.Header, body)
			}
		})
	}
}

// writeRequest writes a POST with a body of size bytes, with Content-Length or chunked. The
// host may answer and close before all of it is written: that write error is returned.
func writeRequest(w io.Writer, path, hdr string, size int, chunked bool) error {
	var head strings.Builder
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: funchost\r\nContent-Type: application/octet-stream\r\n", path)
	if hdr != "" {
		head.WriteString(hdr + "\r\n")
	}
	if chunked {
		head.WriteString("Transfer-Encoding: chunked\r\n\r\n")
	} else {
		fmt.Fprintf(&head, "Content-Length: %d\r\n\r\n", size)
	}
	if _, err := io.WriteString(w, head.String()); err != nil {
		return err
	}
	chunk := bytes.Repeat([]byte("a"), 16<<10)
	for left := size; left > 0; left -= len(chunk) {
		part := chunk[:min(len(chunk), left)]
		if chunked {
			if _, err := fmt.Fprintf(w, "%x\r\n%s\r\n", len(part), part); err != nil {
				return err
			}
		} else if _, err := w.Write(part); err != nil {
			return err
		}
	}
	if chunked {
		_, err := io.WriteString(w, "0\r\n\r\n")
		return err
	}
	return nil
}

// readAnswer reads one answer and its whole body.
func readAnswer(br *bufio.Reader) (*http.Response, []byte, error) {
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}
