package pdfdoc

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
)

// The decompression bombs of the parse-budget tests and the FuzzOpen corpus. Each is built here
// rather than committed: decoded is how many bytes its bomb stream(s) decode to in all.

// deflate returns zlib(n bytes of fill), written by chunks so that the n bytes never exist at once.
func deflate(n int64, fill byte) []byte { return deflateAfter("", n, fill) }

// deflateAfter is deflate of prefix followed by n bytes of fill (an object stream's prolog).
func deflateAfter(prefix string, n int64, fill byte) []byte {
	var b bytes.Buffer
	w, _ := zlib.NewWriterLevel(&b, zlib.BestCompression)
	w.Write([]byte(prefix))
	chunk := bytes.Repeat([]byte{fill}, 1<<16)
	for n > 0 {
		k := min(n, int64(len(chunk)))
		w.Write(chunk[:k])
		n -= k
	}
	w.Close()
	return b.Bytes()
}

// pdfFile writes objs (object i+1 is objs[i], each either a dictionary or "dict\x00data" for a
// stream) with a classic cross-reference table, or with trailer instead of table and trailer
// when xref is set (xref is then the dictionary and data of a cross-reference stream object).
func pdfFile(objs []string, xref string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		writeObj(&b, i+1, o)
	}
	start := b.Len()
	if xref != "" {
		dict, data, _ := strings.Cut(xref, "\x00")
		fmt.Fprintf(&b, "%d 0 obj\n%s\nstream\n%s\nendstream\nendobj\n", len(objs)+1, dict, data)
	} else {
		fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
		for _, off := range offs {
			fmt.Fprintf(&b, "%010d 00000 n \n", off)
		}
		fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\n", len(objs)+1)
	}
	fmt.Fprintf(&b, "startxref\n%d\n%%%%EOF\n", start)
	return b.Bytes()
}

// writeObj writes object nr: o is a dictionary, or "dict\x00data" for a stream.
func writeObj(b *bytes.Buffer, nr int, o string) {
	fmt.Fprintf(b, "%d 0 obj\n", nr)
	if dict, data, ok := strings.Cut(o, "\x00"); ok {
		fmt.Fprintf(b, "%s\nstream\n%s\nendstream", dict, data)
	} else {
		b.WriteString(o)
	}
	b.WriteString("\nendobj\n")
}

var onePage = []string{
	"<< /Type /Catalog /Pages 2 0 R >>",
	"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
	"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
}

func stream(dict string, data []byte) string {
	return fmt.Sprintf("<< %s /Length %d >>\x00%s", dict, len(data), data)
}

// objStmBomb: one object stream whose Flate data decodes to decoded bytes (a space-padded
// object 5, which the cross-reference stream says is compressed in it, so a reader must
// decode the stream).
func objStmBomb(decoded int64) []byte {
	return xrefStreamFile(append(onePage[:3:3], stream("/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", deflateAfter("5 0 null", decoded, ' '))), 4)
}

// xrefStreamFile writes objs with an unfiltered cross-reference stream, which also lists object
// len(objs)+1 as compressed at index 0 of object stream inStm (when inStm > 0).
func xrefStreamFile(objs []string, inStm int) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.7\n")
	var table bytes.Buffer
	table.Write([]byte{0, 0, 0, 0, 0, 0xff, 0xff})
	for i, o := range objs {
		off := b.Len()
		table.Write([]byte{1, byte(off >> 24), byte(off >> 16), byte(off >> 8), byte(off), 0, 0})
		writeObj(&b, i+1, o)
	}
	size := len(objs) + 2
	if inStm > 0 {
		table.Write([]byte{2, 0, 0, 0, byte(inStm), 0, 0})
		size++
	}
	start := b.Len()
	table.Write([]byte{1, byte(start >> 24), byte(start >> 16), byte(start >> 8), byte(start), 0, 0})
	self := size - 1
	fmt.Fprintf(&b, "%d 0 obj\n<< /Type /XRef /W [1 4 2] /Size %d /Root 1 0 R /Length %d >>\nstream\n", self, size, table.Len())
	b.Write(table.Bytes())
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", start)
	return b.Bytes()
}

// xrefStmBomb: the file's cross-reference section is a stream whose data decodes to decoded bytes.
func xrefStmBomb(decoded int64) []byte {
	data := deflate(decoded, 0)
	return pdfFile(onePage, fmt.Sprintf("<< /Type /XRef /W [1 2 1] /Size 5 /Root 1 0 R /Filter /FlateDecode /Length %d >>\x00%s", len(data), data))
}

// nestedBomb: an object stream with two Flate filters; the outer data is small, the inner
// decodes to decoded bytes.
func nestedBomb(decoded int64) []byte {
	inner := deflate(decoded, ' ')
	var outer bytes.Buffer
	w, _ := zlib.NewWriterLevel(&outer, zlib.BestCompression)
	w.Write(inner)
	w.Close()
	return pdfFile(append(onePage[:3:3], stream("/Type /ObjStm /N 1 /First 4 /Filter [/FlateDecode /FlateDecode]", outer.Bytes())), "")
}

// manyStreamsBomb: n object streams of per bytes each: every one is under the per-stream cap,
// together they are not.
func manyStreamsBomb(n int, per int64) []byte {
	objs := onePage[:3:3]
	data := deflate(per, ' ')
	for i := 0; i < n; i++ {
		objs = append(objs, stream("/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", data))
	}
	return pdfFile(objs, "")
}

// contentBomb: the page's content stream decodes to decoded bytes. Reading the structure never
// decodes it, so it opens, cheaply.
func contentBomb(decoded int64) []byte {
	return pdfFile([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R >>",
		stream("/Filter /FlateDecode", deflate(decoded, ' ')),
	}, "")
}

// deepBomb: a page tree whose node is its own kid and a catalog entry nested depth arrays deep.
func deepBomb(depth int) []byte {
	return pdfFile([]string{
		"<< /Type /Catalog /Pages 2 0 R /Deep " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + " >>",
		"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] >>",
	}, "")
}

// manyObjectsBomb: an object stream declaring n objects.
func manyObjectsBomb(n int) []byte {
	return pdfFile(append(onePage[:3:3], stream("/Type /ObjStm /N "+fmt.Sprint(n)+" /First 4 /Filter /FlateDecode", deflate(1<<10, ' '))), "")
}

// bombs are the named bombs at the given scale (decoded bytes of the big ones).
func bombs(decoded int64) map[string][]byte {
	return map[string][]byte{
		"objstm":  objStmBomb(decoded),
		"xrefstm": xrefStmBomb(decoded),
		"nested":  nestedBomb(decoded * 4),
		"many":    manyStreamsBomb(int(decoded/(4<<20))+2, 4<<20),
		"content": contentBomb(decoded),
		"deep":    deepBomb(100_000),
		"objects": manyObjectsBomb(10_000_000),
	}
}
