package stamp

import (
	"bytes"
	"image"
	"image/png"

	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
)

// maxImagePixels bounds decoded drawings (a 4000x2500 canvas) against decompression bombs.
const maxImagePixels = 10_000_000

// addPNG decodes a PNG and adds it as an RGB image XObject with an alpha soft mask. It returns
// the reference and the pixel size. Errors: apperr invalid "image_invalid".
func addPNG(d *pdfdoc.Doc, data []byte) (types.IndirectRef, int, int, error) {
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
	rgb := make([]byte, 0, w*h*3)
	alpha := make([]byte, 0, w*h)
	opaque := true
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := pixel(img, x, y)
			// un-premultiply so that transparent strokes keep their colour
			if a > 0 && a < 0xffff {
				r, g, bl = r*0xffff/a, g*0xffff/a, bl*0xffff/a
			}
			rgb = append(rgb, byte(r>>8), byte(g>>8), byte(bl>>8))
			alpha = append(alpha, byte(a>>8))
			if a != 0xffff {
				opaque = false
			}
		}
	}
	dict := types.Dict{
		"Type": types.Name("XObject"), "Subtype": types.Name("Image"),
		"Width": types.Integer(w), "Height": types.Integer(h),
		"ColorSpace": types.Name("DeviceRGB"), "BitsPerComponent": types.Integer(8),
	}
	if !opaque {
		dict["SMask"] = d.AddStream(pdfdoc.NewFlateStream(types.Dict{
			"Type": types.Name("XObject"), "Subtype": types.Name("Image"),
			"Width": types.Integer(w), "Height": types.Integer(h),
			"ColorSpace": types.Name("DeviceGray"), "BitsPerComponent": types.Integer(8),
		}, alpha))
	}
	return d.AddStream(pdfdoc.NewFlateStream(dict, rgb)), w, h, nil
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
