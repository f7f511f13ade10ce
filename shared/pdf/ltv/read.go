package ltv

import (
	"bytes"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"fmt"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

func init() { api.DisableConfigDir() }

// Signature is one signature field's value in a document.
type Signature struct {
	Field     string
	Dict      types.Dict
	Type      string // Sig or DocTimeStamp
	SubFilter string
	ByteRange [4]int
	Contents  []byte // decoded /Contents (trailing zero padding kept)
}

// IsDocTimestamp reports an ETSI.RFC3161 document timestamp.
func (s Signature) IsDocTimestamp() bool { return s.SubFilter == "ETSI.RFC3161" }

// Document is what a sealed PDF holds for long-term validation.
type Document struct {
	Ctx        *model.Context
	Signatures []Signature // in file order (by the end of their byte range)
	DSS        DSS
}

// DSS is the content of the document's /DSS (every revision's entries; the arrays only grow).
type DSS struct {
	Present     bool
	Certs       []*x509.Certificate
	OCSPs, CRLs [][]byte
	Hashes      map[[32]byte]bool // SHA-256 of every stream, to write each item once
}

// Read parses pdf and returns its signatures and DSS. Errors: an unreadable PDF, a DSS or
// signature value that is malformed.
func Read(pdf []byte) (doc *Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("malformed PDF (%v)", r)
		}
	}()
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if err != nil {
		return nil, fmt.Errorf("not a readable PDF: %w", err)
	}
	cat, err := ctx.Catalog()
	if err != nil {
		return nil, fmt.Errorf("no catalog: %w", err)
	}
	doc = &Document{Ctx: ctx, DSS: DSS{Hashes: map[[32]byte]bool{}}}
	if err := doc.readDSS(cat); err != nil {
		return nil, err
	}
	af, err := ctx.DereferenceDict(cat["AcroForm"])
	if err != nil || af == nil {
		return doc, nil
	}
	fields, err := ctx.DereferenceArray(af["Fields"])
	if err != nil {
		return nil, fmt.Errorf("/AcroForm /Fields is not an array")
	}
	for _, f := range fields {
		fd, err := ctx.DereferenceDict(f)
		if err != nil || fd == nil || fd.NameEntry("FT") == nil || *fd.NameEntry("FT") != "Sig" {
			continue
		}
		sd, err := ctx.DereferenceDict(fd["V"])
		if err != nil || sd == nil {
			continue
		}
		s := Signature{Dict: sd}
		if t, ok := fd["T"].(types.StringLiteral); ok {
			s.Field = t.Value()
		}
		if n := sd.NameEntry("Type"); n != nil {
			s.Type = *n
		}
		if n := sd.NameEntry("SubFilter"); n != nil {
			s.SubFilter = *n
		}
		arr, err := ctx.DereferenceArray(sd["ByteRange"])
		if err != nil || len(arr) != 4 {
			return nil, fmt.Errorf("signature %q: /ByteRange missing or not four numbers", s.Field)
		}
		for i, o := range arr {
			n, ok := o.(types.Integer)
			if !ok || n < 0 {
				return nil, fmt.Errorf("signature %q: /ByteRange holds a non-integer", s.Field)
			}
			s.ByteRange[i] = int(n)
		}
		switch c := sd["Contents"].(type) {
		case types.HexLiteral:
			if s.Contents, err = c.Bytes(); err != nil {
				return nil, fmt.Errorf("signature %q: /Contents is not hex", s.Field)
			}
		case types.StringLiteral:
			if s.Contents, err = types.Unescape(c.Value()); err != nil {
				return nil, fmt.Errorf("signature %q: /Contents: %v", s.Field, err)
			}
		default:
			return nil, fmt.Errorf("signature %q: /Contents missing", s.Field)
		}
		doc.Signatures = append(doc.Signatures, s)
	}
	sortByEnd(doc.Signatures)
	return doc, nil
}

func sortByEnd(s []Signature) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].ByteRange[2]+s[j].ByteRange[3] < s[j-1].ByteRange[2]+s[j-1].ByteRange[3]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func (doc *Document) readDSS(cat types.Dict) error {
	ctx := doc.Ctx
	dss, err := ctx.DereferenceDict(cat["DSS"])
	if err != nil {
		return fmt.Errorf("/DSS is not a dictionary")
	}
	if dss == nil {
		return nil
	}
	doc.DSS.Present = true
	for _, key := range []string{"Certs", "OCSPs", "CRLs"} {
		arr, err := ctx.DereferenceArray(dss[key])
		if err != nil {
			return fmt.Errorf("/DSS /%s is not an array", key)
		}
		for _, o := range arr {
			sd, _, err := ctx.DereferenceStreamDict(o)
			if err != nil || sd == nil {
				return fmt.Errorf("/DSS /%s holds something other than a stream", key)
			}
			if err := sd.Decode(); err != nil {
				return fmt.Errorf("/DSS /%s: %v", key, err)
			}
			data := sd.Content
			doc.DSS.Hashes[sha256.Sum256(data)] = true
			switch key {
			case "Certs":
				c, err := x509.ParseCertificate(data)
				if err != nil {
					return fmt.Errorf("/DSS /Certs: %v", err)
				}
				doc.DSS.Certs = append(doc.DSS.Certs, c)
			case "OCSPs":
				doc.DSS.OCSPs = append(doc.DSS.OCSPs, data)
			default:
				doc.DSS.CRLs = append(doc.DSS.CRLs, data)
			}
		}
	}
	return nil
}

// SignedBytes returns the bytes s's /ByteRange covers, after checking that the range is
// well-formed within pdf and that its gap is exactly s's /Contents.
func (s Signature) SignedBytes(pdf []byte) ([]byte, error) {
	br := s.ByteRange
	end := br[2] + br[3]
	if br[0] != 0 || br[1] <= 0 || br[2] <= br[1]+1 || end > len(pdf) {
		return nil, fmt.Errorf("signature %q: /ByteRange %v is not within the file", s.Field, br)
	}
	gap := pdf[br[1]:br[2]]
	if gap[0] != '<' || gap[len(gap)-1] != '>' {
		return nil, fmt.Errorf("signature %q: the /ByteRange gap is not exactly the /Contents hex string", s.Field)
	}
	contents, err := hex.DecodeString(string(gap[1 : len(gap)-1]))
	if err != nil || !bytes.Equal(contents, s.Contents) {
		return nil, fmt.Errorf("signature %q: the /ByteRange gap is not the signature's /Contents", s.Field)
	}
	signed := make([]byte, 0, br[1]+br[3])
	return append(append(signed, pdf[:br[1]]...), pdf[br[2]:end]...), nil
}
