package pdfdoc

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// subsetTrueType keeps the glyph outlines of gids (plus the components of composite glyphs)
// and empties every other glyph. Glyph ids stay unchanged, so /CIDToGIDMap /Identity holds.
// Only the tables a PDF CIDFontType2 needs are kept; loca is rewritten in long format.
func subsetTrueType(raw []byte, gids []uint16) ([]byte, error) {
	tables, err := ttTables(raw)
	if err != nil {
		return nil, err
	}
	head, loca, glyf, maxp := tables["head"], tables["loca"], tables["glyf"], tables["maxp"]
	if head == nil || loca == nil || glyf == nil || maxp == nil || len(head) < 54 || len(maxp) < 6 {
		return nil, fmt.Errorf("pdfdoc: font lacks head/loca/glyf/maxp")
	}
	numGlyphs := int(binary.BigEndian.Uint16(maxp[4:]))
	long := binary.BigEndian.Uint16(head[50:]) == 1
	offset := func(g int) (int, int, error) {
		var a, b int
		if long {
			if len(loca) < 4*(g+2) {
				return 0, 0, fmt.Errorf("pdfdoc: loca too short")
			}
			a, b = int(binary.BigEndian.Uint32(loca[4*g:])), int(binary.BigEndian.Uint32(loca[4*g+4:]))
		} else {
			if len(loca) < 2*(g+2) {
				return 0, 0, fmt.Errorf("pdfdoc: loca too short")
			}
			a, b = 2*int(binary.BigEndian.Uint16(loca[2*g:])), 2*int(binary.BigEndian.Uint16(loca[2*g+2:]))
		}
		if a > b || b > len(glyf) {
			return 0, 0, fmt.Errorf("pdfdoc: bad loca entry for glyph %d", g)
		}
		return a, b, nil
	}
	keep := map[int]bool{}
	queue := make([]int, 0, len(gids))
	for _, g := range gids {
		queue = append(queue, int(g))
	}
	for len(queue) > 0 {
		g := queue[0]
		queue = queue[1:]
		if g >= numGlyphs || keep[g] {
			continue
		}
		keep[g] = true
		a, b, err := offset(g)
		if err != nil {
			return nil, err
		}
		queue = append(queue, components(glyf[a:b])...)
	}
	newGlyf := make([]byte, 0, 4096)
	newLoca := make([]byte, 4*(numGlyphs+1))
	for g := 0; g < numGlyphs; g++ {
		binary.BigEndian.PutUint32(newLoca[4*g:], uint32(len(newGlyf)))
		if keep[g] {
			a, b, _ := offset(g)
			newGlyf = append(newGlyf, glyf[a:b]...)
			for len(newGlyf)%4 != 0 {
				newGlyf = append(newGlyf, 0)
			}
		}
	}
	binary.BigEndian.PutUint32(newLoca[4*numGlyphs:], uint32(len(newGlyf)))
	newHead := append([]byte(nil), head...)
	binary.BigEndian.PutUint16(newHead[50:], 1)
	binary.BigEndian.PutUint32(newHead[8:], 0)
	out := map[string][]byte{"head": newHead, "loca": newLoca, "glyf": newGlyf, "maxp": maxp}
	for _, t := range []string{"hhea", "hmtx", "cvt ", "fpgm", "prep"} {
		if tables[t] != nil {
			out[t] = tables[t]
		}
	}
	font := ttAssemble(out)
	adj := 0xB1B0AFBA - ttChecksum(font)
	off := ttTableOffset(font, "head")
	binary.BigEndian.PutUint32(font[off+8:], adj)
	return font, nil
}

// components returns the glyph ids a composite glyph refers to.
func components(g []byte) []int {
	if len(g) < 10 || int16(binary.BigEndian.Uint16(g)) >= 0 {
		return nil
	}
	var ids []int
	p := 10
	for p+4 <= len(g) {
		flags := binary.BigEndian.Uint16(g[p:])
		ids = append(ids, int(binary.BigEndian.Uint16(g[p+2:])))
		p += 4
		if flags&0x1 != 0 {
			p += 4
		} else {
			p += 2
		}
		switch {
		case flags&0x8 != 0:
			p += 2
		case flags&0x40 != 0:
			p += 4
		case flags&0x80 != 0:
			p += 8
		}
		if flags&0x20 == 0 {
			break
		}
	}
	return ids
}

func ttTables(raw []byte) (map[string][]byte, error) {
	if len(raw) < 12 {
		return nil, fmt.Errorf("pdfdoc: font too short")
	}
	n := int(binary.BigEndian.Uint16(raw[4:]))
	if len(raw) < 12+16*n {
		return nil, fmt.Errorf("pdfdoc: font directory truncated")
	}
	t := make(map[string][]byte, n)
	for i := 0; i < n; i++ {
		e := raw[12+16*i:]
		off, length := int(binary.BigEndian.Uint32(e[8:])), int(binary.BigEndian.Uint32(e[12:]))
		if off < 0 || length < 0 || off+length > len(raw) {
			return nil, fmt.Errorf("pdfdoc: font table %q out of range", e[:4])
		}
		t[string(e[:4])] = raw[off : off+length]
	}
	return t, nil
}

func ttAssemble(tables map[string][]byte) []byte {
	tags := make([]string, 0, len(tables))
	for tag := range tables {
		tags = append(tags, tag)
	}
	sort.Strings(tags)
	n := len(tags)
	es, sel := 1, 0
	for es*2 <= n {
		es *= 2
		sel++
	}
	out := make([]byte, 12+16*n)
	binary.BigEndian.PutUint32(out, 0x00010000)
	binary.BigEndian.PutUint16(out[4:], uint16(n))
	binary.BigEndian.PutUint16(out[6:], uint16(es*16))
	binary.BigEndian.PutUint16(out[8:], uint16(sel))
	binary.BigEndian.PutUint16(out[10:], uint16(n*16-es*16))
	for i, tag := range tags {
		data := tables[tag]
		e := out[12+16*i:]
		copy(e, tag)
		binary.BigEndian.PutUint32(e[4:], ttChecksum(data))
		binary.BigEndian.PutUint32(e[8:], uint32(len(out)))
		binary.BigEndian.PutUint32(e[12:], uint32(len(data)))
		out = append(out, data...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
	}
	return out
}

func ttTableOffset(font []byte, tag string) int {
	n := int(binary.BigEndian.Uint16(font[4:]))
	for i := 0; i < n; i++ {
		e := font[12+16*i:]
		if string(e[:4]) == tag {
			return int(binary.BigEndian.Uint32(e[8:]))
		}
	}
	return 0
}

func ttChecksum(b []byte) uint32 {
	var sum uint32
	for i := 0; i < len(b); i += 4 {
		var w [4]byte
		copy(w[:], b[i:min(i+4, len(b))])
		sum += binary.BigEndian.Uint32(w[:])
	}
	return sum
}
