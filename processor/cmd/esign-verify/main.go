// Command esign-verify checks a sealed PDF and its evidence bundle offline:
//
//	esign-verify --pdf signed.pdf --bundle evidence.jsonl [--trust seal-ca.pem]
//
// It verifies the PAdES signature (whole-file ByteRange, digest, CMS signature, signing
// certificate, DocMDP certification, timestamp when present), the bundle's hash chain, and
// that the evidence head hash sealed into the document equals the bundle's head. It prints a
// summary and exits 0, or prints the first failure and exits 1 (2 for usage errors).
package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/esign-svc/esign/shared/pdf/verify"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("esign-verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pdfPath := fs.String("pdf", "", "sealed PDF to verify (required)")
	bundlePath := fs.String("bundle", "", "evidence bundle (JSONL) of the session (required)")
	trustPath := fs.String("trust", "", "PEM file of trusted seal certificates (optional)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *pdfPath == "" || *bundlePath == "" {
		fmt.Fprintln(stderr, "esign-verify: --pdf and --bundle are required")
		fs.Usage()
		return 2
	}
	pdf, err := os.ReadFile(*pdfPath)
	if err != nil {
		fmt.Fprintf(stderr, "esign-verify: FAILED: read PDF: %v\n", err)
		return 1
	}
	bundle, err := os.Open(*bundlePath)
	if err != nil {
		fmt.Fprintf(stderr, "esign-verify: FAILED: open bundle: %v\n", err)
		return 1
	}
	defer bundle.Close()
	opts := verify.Options{Bundle: bundle}
	if *trustPath != "" {
		if opts.Trust, err = loadCerts(*trustPath); err != nil {
			fmt.Fprintf(stderr, "esign-verify: FAILED: trust file: %v\n", err)
			return 1
		}
	}
	res, err := verify.Verify(pdf, opts)
	if err != nil {
		fmt.Fprintf(stderr, "esign-verify: FAILED: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "signature: valid (%s, DocMDP P=%d, whole document signed)\n", res.SubFilter, res.DocMDP)
	fmt.Fprintf(stdout, "signer: %s\n", res.Signer.Subject.String())
	if res.Trusted {
		fmt.Fprintln(stdout, "signer certificate: trusted")
	} else {
		fmt.Fprintln(stdout, "signer certificate: not checked (no --trust given)")
	}
	fmt.Fprintf(stdout, "claimed signing time: %s\n", res.SigningTime)
	if res.TimestampTime != nil {
		fmt.Fprintf(stdout, "timestamp: valid, %s\n", res.TimestampTime.UTC().Format("2006-01-02T15:04:05Z"))
	}
	fmt.Fprintf(stdout, "evidence bundle: %d lines, head %s, matches the document\n", res.BundleLines, res.BundleHead)
	fmt.Fprintln(stdout, "OK")
	return 0
}

func loadCerts(path string) ([]*x509.Certificate, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, errors.New("no CERTIFICATE blocks found")
	}
	return out, nil
}
