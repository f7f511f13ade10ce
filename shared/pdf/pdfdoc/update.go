package pdfdoc

import (
	"bytes"
	"encoding/ascii85"
	"fmt"
	"sort"
	"strconv"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Bytes returns the source followed by the update, in one allocation of the exact size.
// Without changes it returns the source itself. infoRef, when non-nil, becomes the trailer's
// /Info.
func (d *Doc) Bytes(infoRef *types.IndirectRef) ([]byte, error) {
	upd, err := d.Update(infoRef)
	if err != nil {
		return nil, err
	}
	if upd == nil {
		return d.base, nil
	}
	return Join(d.base, upd), nil
}

// Join returns base followed by update in one allocation of the exact size (update itself
// when base is empty).
func Join(base, update []byte) []byte {
	if len(base) == 0 {
		return update
	}
	out := make([]byte, len(base)+len(update))
	copy(out, base)
	copy(out[len(base):], update)
	return out
}

// Update serialises the incremental update alone: the file is Base() followed by these bytes
// exactly (offsets inside them are file offsets), so a caller can hash or write the two parts
// without joining them. It returns nil when there is nothing to write. The update's
// cross-reference section is a classic table, or a cross-reference stream when the source's
// last section is a stream (PDF 32000-1 7.5.8: an update's section has the form of the one
// its /Prev points at, so a reader never meets a table pointing at a stream). It runs the
// OnBytes finishers first (once). Errors: a finisher's error, ErrReleased. infoRef, when non-nil, becomes the trailer's /Info.
func (d *Doc) Update(infoRef *types.IndirectRef) ([]byte, error) {
	if d.released {
		return nil, ErrReleased
	}
	for _, f := range d.finishers {
		if err := f(); err != nil {
			return nil, err
		}
	}
	d.finishers = nil
	if len(d.objs) == 0 && infoRef == nil {
		return nil, nil
	}
	nrs := make([]int, 0, len(d.objs)+2)
	estimate := 1024
	for nr, v := range d.objs {
		nrs = append(nrs, nr)
		estimate += 256
		if s, ok := v.(Stream); ok {
			estimate += len(s.Data)
		}
	}
	sort.Ints(nrs)
	var out bytes.Buffer
	out.Grow(estimate)
	switch {
	case d.base == nil && d.ascii:
		out.WriteString("%PDF-1.7\n")
	case d.base == nil:
		out.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	}
	if n := len(d.base); n > 0 && d.base[n-1] != '\n' && d.base[n-1] != '\r' {
		out.WriteByte('\n')
	}
	base := len(d.base)
	offsets := make(map[int]int, len(nrs)+1)
	for _, nr := range nrs {
		offsets[nr] = base + out.Len()
		fmt.Fprintf(&out, "%d %d obj\n", nr, d.gens[nr])
		switch v := d.objs[nr].(type) {
		case Stream:
			if d.ascii {
				v = asciiStream(v)
			}
			sd := v.Dict.Clone().(types.Dict)
			sd.Update("Length", types.Integer(len(v.Data)))
			out.WriteString(sd.PDFString())
			out.WriteString("\nstream\n")
			out.Write(v.Data)
			out.WriteString("\nendstream")
		case types.Object:
			out.WriteString(v.PDFString())
		default:
			return nil, fmt.Errorf("pdfdoc: object %d has unsupported type %T", nr, v)
		}
		out.WriteString("\nendobj\n")
	}
	trailer := types.Dict{"Size": types.Integer(d.size), "Root": d.root}
	if d.base != nil {
		trailer["Prev"] = types.Integer(d.prevXRef)
	}
	if infoRef != nil {
		trailer["Info"] = *infoRef
	} else if d.info != nil {
		trailer["Info"] = *d.info
	}
	xref := base + out.Len()
	trailer["ID"] = d.fileID(xref)
	if d.xrefStream {
		d.writeXRefStream(&out, trailer, nrs, offsets, xref)
	} else {
		d.writeXRefTable(&out, trailer, nrs, offsets)
	}
	fmt.Fprintf(&out, "\nstartxref\n%d\n%%%%EOF\n", xref)
	return out.Bytes(), nil
}

// asciiStream is s ASCII85-encoded, with /ASCII85Decode as its first filter (its decode
// parameters, when it has any, shifted behind a null).
func asciiStream(s Stream) Stream {
	var b bytes.Buffer
	w := ascii85.NewEncoder(&b)
	_, _ = w.Write(s.Data)
	_ = w.Close()
	b.WriteString("~>")
	dict := s.Dict.Clone().(types.Dict)
	a85 := types.Name("ASCII85Decode")
	switch f := dict["Filter"].(type) {
	case nil:
		dict["Filter"] = a85
	case types.Array:
		dict["Filter"] = append(types.Array{a85}, f...)
	default:
		dict["Filter"] = types.Array{a85, f}
	}
	switch p := dict["DecodeParms"].(type) {
	case nil:
	case types.Array:
		dict["DecodeParms"] = append(types.Array{nil}, p...)
	default:
		dict["DecodeParms"] = types.Array{nil, p}
	}
	return Stream{Dict: dict, Data: b.Bytes()}
}

// runs splits sorted object numbers into runs of consecutive numbers: [first, count] pairs.
func runs(nrs []int) [][2]int {
	var r [][2]int
	for i := 0; i < len(nrs); {
		j := i
		for j+1 < len(nrs) && nrs[j+1] == nrs[j]+1 {
			j++
		}
		r = append(r, [2]int{nrs[i], j - i + 1})
		i = j + 1
	}
	return r
}

func (d *Doc) writeXRefTable(out *bytes.Buffer, trailer types.Dict, nrs []int, offsets map[int]int) {
	out.WriteString("xref\n")
	if d.base == nil {
		nrs = append([]int{0}, nrs...)
		d.gens[0] = 65535
	}
	for _, r := range runs(nrs) {
		fmt.Fprintf(out, "%d %d\n", r[0], r[1])
		for nr := r[0]; nr < r[0]+r[1]; nr++ {
			kind := "n"
			if nr == 0 && d.base == nil {
				kind = "f"
			}
			fmt.Fprintf(out, "%010d %05d %s\r\n", offsets[nr], d.gens[nr], kind)
		}
	}
	out.WriteString("trailer\n")
	out.WriteString(trailer.PDFString())
}

// writeXRefStream writes the section as a cross-reference stream object (uncompressed, type
// 1 entries only) numbered after every other object; xref is its file offset.
func (d *Doc) writeXRefStream(out *bytes.Buffer, trailer types.Dict, nrs []int, offsets map[int]int, xref int) {
	self := d.size // one past every allocated number; d.size stays as is, so Update can rerun
	nrs = append(nrs, self)
	offsets[self] = xref
	ow := 1
	for v := xref; v > 0xff; v >>= 8 {
		ow++
	}
	var index types.Array
	for _, r := range runs(nrs) {
		index = append(index, types.Integer(r[0]), types.Integer(r[1]))
	}
	data := make([]byte, 0, len(nrs)*(3+ow))
	for _, nr := range nrs {
		data = append(data, 1)
		for k := ow - 1; k >= 0; k-- {
			data = append(data, byte(offsets[nr]>>(8*k)))
		}
		g := d.gens[nr]
		data = append(data, byte(g>>8), byte(g))
	}
	trailer["Type"] = types.Name("XRef")
	trailer["Size"] = types.Integer(self + 1)
	trailer["W"] = types.Array{types.Integer(1), types.Integer(ow), types.Integer(2)}
	trailer["Index"] = index
	trailer["Length"] = types.Integer(len(data))
	out.WriteString(strconv.Itoa(self) + " 0 obj\n")
	out.WriteString(trailer.PDFString())
	out.WriteString("\nstream\n")
	out.Write(data)
	out.WriteString("\nendstream\nendobj")
}
