package pdfdoc

import (
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"

	pdffilter "github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/esign-svc/esign/shared/apperr"
)

// Limits is the budget of one parse of an untrusted PDF (DESIGN section 14, "Untrusted
// documents"). pdfcpu decodes, when it reads a file, only its structure streams (object streams
// and cross-reference streams: never content or image data), each whole in memory and with no
// total cap; Open therefore first pre-scans the file, inflating every structure stream through
// a counter into io.Discard (constant memory), and refuses with 400 pdf_too_complex a file past
// any limit before pdfcpu sees it. pdfcpu's own per-stream limits are set to the same figures as
// a second fence.
type Limits struct {
	// StreamBytes caps the decoded bytes of one structure stream (and of each stage of its
	// filter chain).
	StreamBytes int64
	// TotalBytes caps the decoded bytes of all structure streams of one parse.
	TotalBytes int64
	// Objects caps the objects a file declares: the sum of its object streams' /N and the
	// largest /Size of its trailers and cross-reference streams.
	Objects int
}

// DefaultLimits: a legitimate PDF's object streams hold a few hundred KB each and a 50 MiB scan
// has a few thousand objects, while these figures keep one parse of any file, whatever its
// size, to tens of MB: at most 32 MiB of decoded structure, no stream above 8 MiB, and at most
// 500 000 objects (pdfcpu keeps one table entry per object).
var DefaultLimits = Limits{StreamBytes: 8 << 20, TotalBytes: 32 << 20, Objects: 500_000}

// parses admits at most two parses at once in this process: with DefaultLimits, two
// concurrent worst cases stay well under an instance's memory.
var parses = make(chan struct{}, 2)

func acquireParse() func() {
	parses <- struct{}{}
	return func() { <-parses }
}

// errBudget is returned by the counting reader past a limit.
var errBudget = errors.New("pdf budget exceeded")

func tooComplex(msg string) error {
	return apperr.Invalid(CodeTooComplex, apperr.Field("pdf", msg))
}

// applyLimits sets pdfcpu's own resource limits from l.
func applyLimits(conf *model.Configuration, l Limits) {
	conf.Limits.MaxDecodeBytes = l.StreamBytes
	conf.Limits.MaxObjectCount = l.Objects
	conf.Limits.MaxXRefEntries = l.Objects
	conf.Limits.MaxObjectStreamCount = l.Objects
	conf.Limits.MaxObjectStreamFirst = l.StreamBytes
}

var (
	reStructure = regexp.MustCompile(`/Type\s*/(ObjStm|XRef)\b|/First\b|/W\s*\[`)
	reFilter    = regexp.MustCompile(`/Filter\s*(\[[^\]]*\]|/[^\s/\[\]<>()]+)`)
	reName      = regexp.MustCompile(`/([^\s/\[\]<>()]+)`)
	reCount     = regexp.MustCompile(`/(N|Size)\s+(\d+)`)
	reTrailer   = regexp.MustCompile(`trailer\s*<<[^>]*?/Size\s+(\d+)`)
	kwStream    = []byte("stream")
	kwEnd       = []byte("endstream")
)

// prescan checks src against l without keeping any decoded byte: every structure stream is
// decoded through its filter chain into a counter. It answers nil or a pdf_too_complex problem;
// a stream it cannot decode (corrupt data, a filter it does not know) is left to pdfcpu to judge.
func prescan(src []byte, l Limits) error {
	var total int64
	var zs zlibs
	objects := 0
	for pos := 0; ; {
		i := bytes.Index(src[pos:], kwStream)
		if i < 0 {
			break
		}
		i += pos
		pos = i + len(kwStream)
		dict := dictBefore(src, i)
		if dict == nil {
			continue // "endstream", or the word inside a string
		}
		for _, m := range reCount.FindAllSubmatch(dict, -1) {
			n, err := strconv.Atoi(string(m[2]))
			if err != nil || n > l.Objects {
				return tooComplex(fmt.Sprintf("a stream declares more than %d objects", l.Objects))
			}
			if string(m[1]) == "N" {
				if objects += n; objects > l.Objects {
					return tooComplex(fmt.Sprintf("more than %d objects in object streams", l.Objects))
				}
			}
		}
		if !reStructure.Match(dict) {
			continue // content, image, font, metadata: not decoded to read the structure
		}
		start := pos
		if start < len(src) && src[start] == '\r' {
			start++
		}
		if start < len(src) && src[start] == '\n' {
			start++
		}
		end := bytes.Index(src[start:], kwEnd)
		if end < 0 {
			end = len(src) - start
		}
		// Whatever /Length says, the data ends at "endstream": a huge /Length buys nothing.
		n, err := zs.decodedSize(src[start:start+end], filters(dict), l.StreamBytes)
		if errors.Is(err, errBudget) {
			return tooComplex(fmt.Sprintf("a structure stream decodes to more than %d bytes", l.StreamBytes))
		}
		if total += n; total > l.TotalBytes {
			return tooComplex(fmt.Sprintf("the structure streams decode to more than %d bytes", l.TotalBytes))
		}
		pos = start + end
	}
	for _, m := range reTrailer.FindAllSubmatch(src, -1) {
		if n, err := strconv.Atoi(string(m[1])); err != nil || n > l.Objects {
			return tooComplex(fmt.Sprintf("the trailer declares more than %d objects", l.Objects))
		}
	}
	return nil
}

// dictBefore returns the dictionary that ends just before the keyword at i ("<< ... >>" and
// whitespace), or nil when no dictionary ends there. Nested dictionaries are matched; the search
// goes back at most 1 MiB.
func dictBefore(src []byte, i int) []byte {
	j := i
	for j > 0 && isSpace(src[j-1]) {
		j--
	}
	if j < 2 || src[j-1] != '>' || src[j-2] != '>' {
		return nil
	}
	depth := 0
	floor := max(0, j-(1<<20))
	for k := j - 1; k > floor; k-- {
		switch {
		case src[k] == '>' && src[k-1] == '>':
			depth++
			k--
		case src[k] == '<' && src[k-1] == '<':
			depth--
			k--
			if depth == 0 {
				return src[k:j]
			}
		}
	}
	return src[floor:j]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

// filters returns the names of a stream dictionary's /Filter, in decoding order.
func filters(dict []byte) []string {
	m := reFilter.FindSubmatch(dict)
	if m == nil {
		return nil
	}
	var out []string
	for _, n := range reName.FindAllSubmatch(m[1], -1) {
		out = append(out, string(n[1]))
	}
	return out
}

// decodedSize decodes raw through names into io.Discard and returns the bytes the last stage
// produced; each stage is capped at limit (errBudget past it). It stops at the first filter it
// cannot stream (an image codec, an unknown name) or at corrupt data, counting what was decoded.
func (zs *zlibs) decodedSize(raw []byte, names []string, limit int64) (int64, error) {
	var r io.Reader = bytes.NewReader(raw)
	for idx, name := range names {
		var next io.Reader
		switch name {
		case pdffilter.Flate, "Fl":
			zr, err := zs.reader(idx, r)
			if err != nil && idx == 0 {
				next = flate.NewReader(bytes.NewReader(raw)) // raw deflate without a zlib header
			} else if err == nil {
				next = zr
			}
		case pdffilter.ASCII85, "A85":
			next = ascii85.NewDecoder(r)
		case pdffilter.ASCIIHex, "AHx":
			next = &hexReader{r: r}
		case pdffilter.RunLength, "RL":
			next = &runLengthReader{r: r}
		case pdffilter.LZW, "LZW":
			// No streaming decoder: pdfcpu's own, capped at limit (it buffers at most that).
			f, err := pdffilter.NewFilter(pdffilter.LZW, nil, limit)
			if err != nil {
				return 0, nil
			}
			out, err := f.Decode(&limitReader{r: r, n: limit})
			if errors.Is(err, pdffilter.ErrDecodeLimitExceeded) || errors.Is(err, errBudget) {
				return 0, errBudget
			}
			if err != nil {
				return 0, nil
			}
			next = out
		}
		if next == nil {
			break
		}
		r = &limitReader{r: next, n: limit}
	}
	n, err := io.Copy(io.Discard, r)
	if errors.Is(err, errBudget) {
		return n, errBudget
	}
	return n, nil
}

// zlibs keeps one zlib reader per stage of a filter chain for the whole pre-scan, so that a
// file of many small streams costs one decoder's window, not one per stream.
type zlibs []io.ReadCloser

func (zs *zlibs) reader(stage int, r io.Reader) (io.ReadCloser, error) {
	for len(*zs) <= stage {
		*zs = append(*zs, nil)
	}
	if zr := (*zs)[stage]; zr != nil {
		return zr, zr.(zlib.Resetter).Reset(r, nil)
	}
	zr, err := zlib.NewReader(r)
	if err == nil {
		(*zs)[stage] = zr
	}
	return zr, err
}

// limitReader reads r and fails with errBudget once more than n bytes came out of it.
type limitReader struct {
	r io.Reader
	n int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	if l.n -= int64(n); l.n < 0 {
		return n, errBudget
	}
	return n, err
}

// hexReader decodes ASCIIHexDecode data; '>' ends it.
type hexReader struct {
	r    io.Reader
	half int // -1 when no pending nibble
	done bool
	buf  [512]byte
}

func (h *hexReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if h.half == 0 {
		h.half = -1
	}
	out := 0
	for out == 0 {
		if h.done {
			return 0, io.EOF
		}
		m, err := h.r.Read(h.buf[:min(len(h.buf), 2*len(p))])
		for _, c := range h.buf[:m] {
			v := -1
			switch {
			case c >= '0' && c <= '9':
				v = int(c - '0')
			case c >= 'a' && c <= 'f':
				v = int(c-'a') + 10
			case c >= 'A' && c <= 'F':
				v = int(c-'A') + 10
			case c == '>':
				h.done = true
			}
			if h.done {
				break
			}
			if v < 0 {
				continue
			}
			if h.half < 0 {
				h.half = v + 1
			} else {
				p[out] = byte((h.half-1)<<4 | v)
				out++
				h.half = -1
			}
		}
		if err != nil {
			if out == 0 {
				return 0, err
			}
			return out, nil
		}
	}
	return out, nil
}

// runLengthReader decodes RunLengthDecode data (ISO 32000-1, 7.4.5).
type runLengthReader struct {
	r    io.Reader
	lit  int  // literal bytes still to copy
	rep  int  // repetitions of b still to emit
	b    byte // the repeated byte
	done bool
	hdr  [1]byte
}

func (d *runLengthReader) Read(p []byte) (int, error) {
	out := 0
	for out < len(p) {
		switch {
		case d.rep > 0:
			for d.rep > 0 && out < len(p) {
				p[out] = d.b
				out++
				d.rep--
			}
		case d.lit > 0:
			m, err := d.r.Read(p[out:min(len(p), out+d.lit)])
			out += m
			d.lit -= m
			if err != nil {
				return out, err
			}
		case d.done:
			if out == 0 {
				return 0, io.EOF
			}
			return out, nil
		default:
			if _, err := io.ReadFull(d.r, d.hdr[:]); err != nil {
				d.done = true
				continue
			}
			switch n := int(d.hdr[0]); {
			case n < 128:
				d.lit = n + 1
			case n == 128:
				d.done = true
			default:
				if _, err := io.ReadFull(d.r, d.hdr[:]); err != nil {
					d.done = true
					continue
				}
				d.b, d.rep = d.hdr[0], 257-n
			}
		}
	}
	return out, nil
}
