package stamp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image"
	"image/png"
	"io"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// maxImagePixels bounds decoded drawings (a 4000x2500 canvas) against decompression bombs.
const maxImagePixels = 10_000_000

type pngXObject struct {
	ref  types.IndirectRef
	w, h int
}

// AddPNG decodes a PNG and adds it as an RGB image XObject with an alpha soft mask. It returns
// the reference and the pixel size. The same PNG bytes added twice to one document (initials
// on every page, the drawing in the evidence certificate) share one XObject. Errors: apperr
// invalid "image_invalid".
func AddPNG(d *pdfdoc.Doc, data []byte) (types.IndirectRef, int, int, error) {
	sum := sha256.Sum256(data)
	v, err := d.Memo("stamp.png:"+hex.EncodeToString(sum[:]), func() (any, error) {
		ref, w, h, err := addPNGOnce(d, data)
		return pngXObject{ref, w, h}, err
	})
	if err != nil {
		return types.IndirectRef{}, 0, 0, err
	}
	x := v.(pngXObject)
	return x.ref, x.w, x.h, nil
}

func addPNGOnce(d *pdfdoc.Doc, data []byte) (types.IndirectRef, int, int, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(data))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxImagePixels {
		return types.IndirectRef{}, 0, 0, apperr.Invalid("image_invalid", apperr.Field("value", "the drawing is not a PNG of an acceptable size"))
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		return types.IndirectRef{}, 0, 0, apperr.Invalid("image_invalid", apperr.Field("value", "the drawing is not a readable PNG"))
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	opaque := true
	// rows streams the image row by row, un-premultiplied (so that transparent strokes keep
	// their colour), into the compressor: RGB samples, or the alpha channel.
	rows := func(alpha bool) func(io.Writer) error {
		return func(out io.Writer) error {
			n := 3
			if alpha {
				n = 1
			}
			row := make([]byte, 0, w*n)
			for y := b.Min.Y; y < b.Max.Y; y++ {
				row = row[:0]
				for x := b.Min.X; x < b.Max.X; x++ {
					r, g, bl, a := pixel(img, x, y)
					if alpha {
						row = append(row, byte(a>>8))
						continue
					}
					if a != 0xffff {
						opaque = false
					}
					if a > 0 && a < 0xffff {
						r, g, bl = r*0xffff/a, g*0xffff/a, bl*0xffff/a
					}
					row = append(row, byte(r>>8), byte(g>>8), byte(bl>>8))
				}
				if _, err := out.Write(row); err != nil {
					return err
				}
			}
			return nil
		}
	}
	dict := types.Dict{
		"Type": types.Name("XObject"), "Subtype": types.Name("Image"),
		"Width": types.Integer(w), "Height": types.Integer(h),
		"ColorSpace": types.Name("DeviceRGB"), "BitsPerComponent": types.Integer(8),
	}
	rgb, err := pdfdoc.NewFlateStreamFunc(dict, rows(false))
	if err != nil {
		return types.IndirectRef{}, 0, 0, err
	}
	if !opaque {
		mask, err := pdfdoc.NewFlateStreamFunc(types.Dict{
			"Type": types.Name("XObject"), "Subtype": types.Name("Image"),
			"Width": types.Integer(w), "Height": types.Integer(h),
			"ColorSpace": types.Name("DeviceGray"), "BitsPerComponent": types.Integer(8),
		}, rows(true))
		if err != nil {
			return types.IndirectRef{}, 0, 0, err
		}
		dict["SMask"] = d.AddStream(mask)
	}
	return d.AddStream(rgb), w, h, nil
}

func pixel(img image.Image, x, y int) (uint32, uint32, uint32, uint32) {
	switch m := img.(type) {
	case *image.NRGBA:
		c := m.NRGBAAt(x, y)
		a := uint32(c.A) * 0x101
		return uint32(c.R) * 0x101 * a / 0xffff, uint32(c.G) * 0x101 * a / 0xffff, uint32(c.B) * 0x101 * a / 0xffff, a
	default:
		return img.At(x, y).RGBA()
	}
}
