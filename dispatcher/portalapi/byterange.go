package portalapi

import (
	"strconv"
	"strings"
)

// byteRange is one satisfiable range of a resource of a known size.
type byteRange struct{ start, length int64 }

// parseRange reads a Range header for a resource of size bytes (RFC 9110 section 14). It
// answers one range: ok false means "serve the whole resource" (no header, another unit, several
// ranges, or a malformed header, which the RFC lets a server ignore); unsatisfiable true means
// 416. Forms: bytes=a-b, bytes=a-, bytes=-n.
func parseRange(header string, size int64) (r byteRange, ok, unsatisfiable bool) {
	spec, found := strings.CutPrefix(strings.TrimSpace(header), "bytes=")
	if !found || strings.Contains(spec, ",") {
		return r, false, false
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return r, false, false
	}
	if first == "" { // suffix: the last n bytes
		n, err := strconv.ParseInt(last, 10, 64)
		if err != nil || n < 0 {
			return r, false, false
		}
		if n == 0 || size == 0 {
			return r, false, true
		}
		n = min(n, size)
		return byteRange{start: size - n, length: n}, true, false
	}
	start, err := strconv.ParseInt(first, 10, 64)
	if err != nil || start < 0 {
		return r, false, false
	}
	end := size - 1
	if last != "" {
		if end, err = strconv.ParseInt(last, 10, 64); err != nil || end < start {
			return r, false, false
		}
		end = min(end, size-1)
	}
	if start >= size {
		return r, false, true
	}
	return byteRange{start: start, length: end - start + 1}, true, false
}
