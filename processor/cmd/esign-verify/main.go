// Command esign-verify checks a sealed PDF and its evidence bundle offline:
//
//	esign-verify --pdf signed.pdf --bundle evidence.jsonl [--trust seal-ca.pem] [--json]
//
// It verifies, with no network, every signature and document timestamp of the PDF (ByteRange,
// digest, CMS signature, signing certificate, DocMDP certification, timestamps), builds each
// signer's chain and finds its revocation answers in the document's DSS, reports the PAdES
// level (B-B, B-T, B-LT, B-LTA) and when the archive timestamp's certificate expires, checks
// the bundle's hash chain and that the evidence head hash sealed into the document equals the
// bundle's head. It prints a summary (--json: one JSON object) and exits 0, or the first
// failure and exits 1 (2 for usage errors).
package main

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/esign-svc/esign/shared/pdf/verify"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("esign-verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pdfPath := fs.String("pdf", "", "sealed PDF to verify (required)")
	bundlePath := fs.String("bundle", "", "evidence bundle (JSONL) of the session (required)")
	trustPath := fs.String("trust", "", "PEM file of trusted seal certificates (optional)")
	asJSON := fs.Bool("json", false, "print the result as one JSON object")
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
	if *asJSON {
		return printJSON(stdout, res, err)
	}
	if err != nil {
		fmt.Fprintf(stderr, "esign-verify: FAILED: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "level: PAdES %s\n", res.Level)
	fmt.Fprintf(stdout, "seal: valid (%s, DocMDP P=%d)\n", res.SubFilter, res.DocMDP)
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
	for _, c := range res.Signatures {
		when := "no timestamp"
		if c.Time != nil {
			when = "timestamp " + c.Time.UTC().Format(time.RFC3339)
		}
		trust := ""
		if opts.Trust != nil {
			trust = ", chain not trusted"
			if c.Trusted {
				trust = ", chain trusted"
			}
		}
		fmt.Fprintf(stdout, "%s %q: valid, %s, by %s%s\n", c.Kind, c.Field, when, c.Signer.Subject.CommonName, trust)
		printChain(stdout, "  chain", c.Chain)
		printChain(stdout, "  timestamp chain", c.TimestampChain)
	}
	if res.ArchiveExpires != nil {
		fmt.Fprintf(stdout, "archive timestamp certificate expires: %s (renew before)\n", res.ArchiveExpires.UTC().Format(time.RFC3339))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(stdout, "warning: %s\n", w)
	}
	fmt.Fprintf(stdout, "evidence bundle: %d lines, head %s, matches the document\n", res.BundleLines, res.BundleHead)
	fmt.Fprintln(stdout, "OK")
	return 0
}

func printChain(w io.Writer, label string, chain []verify.CertStatus) {
	for _, c := range chain {
		rev := c.Revocation
		if rev == "" {
			rev = "no revocation answer in the DSS"
		}
		fmt.Fprintf(w, "%s: %s (until %s): %s\n", label, c.Cert.Subject.CommonName, c.Cert.NotAfter.UTC().Format(time.RFC3339), rev)
	}
}

type jsonCert struct {
	Subject    string    `json:"subject"`
	NotAfter   time.Time `json:"notAfter"`
	Revocation string    `json:"revocation"`
}

type jsonSignature struct {
	Field          string     `json:"field"`
	Kind           string     `json:"kind"`
	Signer         string     `json:"signer"`
	Time           *time.Time `json:"time,omitempty"`
	WholeFile      bool       `json:"wholeFile"`
	Chain          []jsonCert `json:"chain"`
	TimestampChain []jsonCert `json:"timestampChain,omitempty"`
	Trusted        bool       `json:"trusted"`
	// TimestampTrusted is the signature timestamp's chain's trust.
	TimestampTrusted bool `json:"timestampTrusted,omitempty"`
}

type jsonResult struct {
	Valid          bool            `json:"valid"`
	Error          string          `json:"error,omitempty"`
	Level          string          `json:"level,omitempty"`
	DocMDP         int             `json:"docMDP,omitempty"`
	Signer         string          `json:"signer,omitempty"`
	Trusted        bool            `json:"trusted"`
	SigningTime    string          `json:"signingTime,omitempty"`
	Signatures     []jsonSignature `json:"signatures,omitempty"`
	ArchiveExpires *time.Time      `json:"archiveTimestampExpires,omitempty"`
	EvidenceHead   string          `json:"evidenceHead,omitempty"`
	BundleLines    int             `json:"bundleLines,omitempty"`
	Warnings       []string        `json:"warnings,omitempty"`
}

func chainJSON(chain []verify.CertStatus) []jsonCert {
	var out []jsonCert
	for _, c := range chain {
		out = append(out, jsonCert{Subject: c.Cert.Subject.String(), NotAfter: c.Cert.NotAfter.UTC(), Revocation: c.Revocation})
	}
	return out
}

// printJSON writes res (or err) as one object; the exit code is run's.
func printJSON(w io.Writer, res *verify.Result, err error) int {
	out := jsonResult{}
	if err != nil {
		out.Error = err.Error()
	} else {
		out = jsonResult{Valid: true, Level: res.Level.String(), DocMDP: res.DocMDP, Signer: res.Signer.Subject.String(),
			Trusted: res.Trusted, SigningTime: res.SigningTime, ArchiveExpires: res.ArchiveExpires,
			EvidenceHead: res.BundleHead, BundleLines: res.BundleLines, Warnings: res.Warnings}
		for _, c := range res.Signatures {
			out.Signatures = append(out.Signatures, jsonSignature{Field: c.Field, Kind: c.Kind, Signer: c.Signer.Subject.String(),
				Time: c.Time, WholeFile: c.WholeFile, Chain: chainJSON(c.Chain), TimestampChain: chainJSON(c.TimestampChain),
				Trusted: c.Trusted, TimestampTrusted: c.TimestampTrusted})
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if e := enc.Encode(out); e != nil {
		return 1
	}
	if err != nil {
		return 1
	}
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
