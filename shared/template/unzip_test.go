package template

import (
	"archive/zip"
	"bytes"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
)

// rawZip writes entries stored as they are, with the sizes and CRC each declares.
type rawEntry struct {
	name     string
	body     []byte
	declared uint64 // the uncompressed size the header claims
}

func rawZip(t *testing.T, entries ...rawEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: e.name, Method: zip.Store, CRC32: crc32.ChecksumIEEE(e.body),
			CompressedSize64: uint64(len(e.body)), UncompressedSize64: e.declared})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestUnzip(t *testing.T) {
	t.Parallel()
	y := []byte("name: n\nversion: 1\n")
	bad := func(format string, args ...any) error {
		return apperr.Invalid(CodeInvalid, apperr.Field("templatePath", fmt.Sprintf(format, args...)))
	}
	cases := []struct {
		name    string
		entries []rawEntry
		want    string // "" = the files are found
	}{
		{"root", []rawEntry{{"template.yaml", y, uint64(len(y))}, {"template.pdf", fakePDF, uint64(len(fakePDF))}}, ""},
		{"top folder, dot-slash", []rawEntry{{"./pkg/template.yaml", y, uint64(len(y))}, {"pkg/template.pdf", fakePDF, uint64(len(fakePDF))}}, ""},
		{"declared too large", []rawEntry{{"template.yaml", y, MaxYAMLBytes + 1}}, "template.yaml is larger than 256 KiB"},
		{"holds more than it declares, past the limit", []rawEntry{{"template.yaml", make([]byte, MaxYAMLBytes+10), 10}}, "template.yaml cannot be read from the package"},
		{"holds more than it declares, within the limit", []rawEntry{{"template.yaml", y, 3}}, "template.yaml cannot be read from the package"},
		{"holds less than it declares", []rawEntry{{"template.yaml", y, uint64(len(y)) + 5}}, "template.yaml cannot be read from the package"},
		{"twice", []rawEntry{{"template.yaml", y, uint64(len(y))}, {"template.yaml", y, uint64(len(y))}}, "the package holds template.yaml twice"},
		{"escaping names are ignored", []rawEntry{{"../template.yaml", y, uint64(len(y))}, {"/template.pdf", fakePDF, uint64(len(fakePDF))}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			files, err := unzip(rawZip(t, c.entries...), bad)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if c.name != "escaping names are ignored" && (!bytes.Equal(files[FileYAML], y) || !bytes.Equal(files[FilePDF], fakePDF)) {
					t.Errorf("files = %v", files)
				}
				if c.name == "escaping names are ignored" && len(files) != 0 {
					t.Errorf("files = %v", files)
				}
				return
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeInvalid || !strings.HasPrefix(e.Fields[0].Message, c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}
