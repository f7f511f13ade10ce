package smtp

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
)

// errHeaderBreak is returned for a header value holding a line break (header injection).
var errHeaderBreak = errors.New("a header value holds a line break or control character")

// buildMessage renders the RFC 5322 message: From, To, Subject (RFC 2047 encoded-words, folded),
// Date, Message-ID, MIME-Version and either a multipart/alternative body (text, then HTML) or a
// single text/plain part when there is no HTML. Parts are UTF-8, quoted-printable.
func buildMessage(from mail.Address, to, subject, text, html string, now time.Time) ([]byte, error) {
	for _, v := range []string{from.Name, from.Address, to, subject} {
		if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return nil, errHeaderBreak
		}
	}
	id, err := messageID(from.Address)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	header := func(name, value string) {
		sep := ": "
		if strings.HasPrefix(value, "\r\n") {
			sep = ":" // the value starts folded
		}
		b.WriteString(name + sep + value + "\r\n")
	}
	header("From", from.String())
	header("To", (&mail.Address{Address: to}).String())
	header("Subject", encodeSubject(subject))
	header("Date", now.Format(time.RFC1123Z))
	header("Message-ID", id)
	header("MIME-Version", "1.0")
	if html == "" {
		header("Content-Type", "text/plain; charset=utf-8")
		header("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		if err := writeQP(&b, text); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	mw := multipart.NewWriter(&b)
	// Folded before the parameter so the line stays under 78 characters.
	header("Content-Type", "multipart/alternative;\r\n boundary="+mw.Boundary()) // hex: no quoting needed
	b.WriteString("\r\n")
	for _, part := range []struct{ ctype, body string }{{"text/plain", text}, {"text/html", html}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {part.ctype + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err != nil {
			return nil, err
		}
		if err := writeQP(w, part.body); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeQP(w interface{ Write([]byte) (int, error) }, s string) error {
	qp := quotedprintable.NewWriter(w)
	if _, err := qp.Write([]byte(s)); err != nil {
		return err
	}
	return qp.Close()
}

// encodeSubject encodes a non-ASCII subject as UTF-8 Q encoded-words (each at most 75 bytes)
// and folds before each so no header line grows past 78 characters.
func encodeSubject(s string) string {
	enc := mime.QEncoding.Encode("utf-8", s)
	if enc == s {
		return s // plain ASCII
	}
	return "\r\n " + strings.ReplaceAll(enc, " =?utf-8?", "\r\n =?utf-8?")
}

// messageID is <random@domain of the sender>.
func messageID(from string) (string, error) {
	var r [16]byte
	if _, err := rand.Read(r[:]); err != nil {
		return "", err
	}
	domain := "localhost"
	if at := strings.LastIndexByte(from, '@'); at >= 0 && at < len(from)-1 {
		domain = from[at+1:]
	}
	return fmt.Sprintf("<%s@%s>", hex.EncodeToString(r[:]), domain), nil
}
