package devkeys

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/esign-svc/esign/shared/pdf"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pdf/ltv"
	"github.com/esign-svc/esign/shared/pdf/pades"
	"github.com/esign-svc/esign/shared/pdf/pdfdoc"
	"github.com/esign-svc/esign/shared/pdf/verify"
)

// TestSetupPKISealsBLTA is make run's seal: an .local made before issue 25 (self-signed seal)
// gets a development PKI, the seal key keeps its key and gets a certificate of the PKI's CA,
// dev.env names the TSA and B-LTA, and a seal with exactly these settings against the served
// PKI verifies offline as B-LTA.
func TestSetupPKISealsBLTA(t *testing.T) {
	dir := t.TempDir()
	if _, err := Setup(dir, Options{}); err != nil { // an .local of before: self-signed, no TSA
		t.Fatal(err)
	}
	oldKey, _ := os.ReadFile(dir + "/keys/" + FileSealKey)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	res, err := Setup(dir, Options{PKIURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if res.Env["SEAL_TSA_URL"] != url+"/tsa" || res.Env["SEAL_LEVEL"] != "B-LTA" {
		t.Fatalf("dev.env: SEAL_TSA_URL %q SEAL_LEVEL %q", res.Env["SEAL_TSA_URL"], res.Env["SEAL_LEVEL"])
	}
	if newKey, _ := os.ReadFile(res.Env["SEAL_KEY_FILE"]); !bytes.Equal(oldKey, newKey) {
		t.Fatal("the seal key was replaced")
	}
	p, err := LoadPKI(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: p.Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	certPEM, _ := os.ReadFile(res.Env["SEAL_CERT_FILE"])
	keyPEM, _ := os.ReadFile(res.Env["SEAL_KEY_FILE"])
	signer, chain, err := pades.LoadPEM(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if len(chain) != 3 || chain[0].CheckSignatureFrom(p.CA) != nil {
		t.Fatalf("seal chain of %d, first issued by %s", len(chain), chain[0].Issuer)
	}
	d := pdfdoc.New()
	if _, err := d.AppendPage(612, 792, []byte("0 g 72 72 10 10 re f\n"), nil); err != nil {
		t.Fatal(err)
	}
	src, _ := d.Bytes(nil)
	level, _ := ltv.ParseLevel(res.Env["SEAL_LEVEL"])
	out, err := pdf.Seal(context.Background(), pdf.SealInput{Source: src, Certificate: certificate.Certificate{DocumentTitle: "t"},
		Signer: signer, Chain: chain, TSAURL: res.Env["SEAL_TSA_URL"], Level: level})
	if err != nil {
		t.Fatal(err)
	}
	_ = srv.Close() // offline from here
	v, err := verify.Verify(out.SignedPDF, verify.Options{Trust: chain[2:]})
	if err != nil || v.Level != ltv.LevelLTA || !v.Trusted {
		t.Fatalf("verify: %v, %+v", err, v)
	}

	// a second run keeps everything
	again, err := Setup(dir, Options{PKIURL: url})
	if err != nil || len(again.Created) != 0 {
		t.Fatalf("second run created %v (%v)", again.Created, err)
	}
	if _, err := Setup(dir, Options{PKIURL: "http://127.0.0.1:1"}); err == nil {
		t.Fatal("a PKI made for another address was accepted")
	}
}
