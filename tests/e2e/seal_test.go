package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/esign-svc/esign/shared/azure/azconn"
	"github.com/esign-svc/esign/shared/azure/queuestore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/evidence"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/notify/outbox"
	"github.com/esign-svc/esign/shared/pdf/certificate"
	"github.com/esign-svc/esign/shared/pii"
)

const sealWait = 90 * time.Second

// sealSignAll creates a parallel buyer/seller session on the template and signs both slots.
// mutate may change the create body; before may act after create and before signing.
func sealSignAll(t *testing.T, mutate func(map[string]any), before func(body map[string]any)) (map[string]any, []*sealSigner) {
	t.Helper()
	body := createBody(t, "parallel", 2)
	if mutate != nil {
		mutate(body)
	}
	created := createSession(t, tenantA, body)
	if before != nil {
		before(body)
	}
	signers := sealSigners(body, created)
	for i, sg := range signers {
		r := sealWalkSigner(t, sg, sealPortalURL(created, i))
		want := "in_progress"
		if i == len(signers)-1 {
			want = "sealing"
		}
		if r.str("sessionState") != want {
			t.Fatalf("after slot %d signed the session is %q, want %q", i, r.str("sessionState"), want)
		}
	}
	return body, signers
}

func sealComplete(r reply) bool {
	return r.str("state") == "complete" && r.str("signedDocumentPath") != "" &&
		r.str("certificatePath") != "" && r.str("evidencePath") != ""
}

func TestSealEndToEnd(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	body, signers := sealSignAll(t, nil, nil)
	corr := body["correlationId"].(string)
	st := sealWaitStatus(t, tenantA, corr, sealWait, "complete with paths", sealComplete)
	if st.str("sealError") != "" {
		t.Fatalf("complete session shows sealError %q", st.str("sealError"))
	}
	signed, _ := sealDownload(t, st.str("signedDocumentPath"))
	cert, _ := sealDownload(t, st.str("certificatePath"))
	bundle, _ := sealDownload(t, st.str("evidencePath"))
	dir := t.TempDir()
	signedPath := sealWriteTemp(t, dir, "signed.pdf", signed)
	certPath := sealWriteTemp(t, dir, "certificate.pdf", cert)
	bundlePath := sealWriteTemp(t, dir, "evidence.jsonl", bundle)

	t.Run("pdfsig", func(t *testing.T) {
		out, _ := sealRun("pdfsig", signedPath) // exits 0 even on a bad digest: read its output
		if !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
			t.Fatalf("pdfsig:\n%s", out)
		}
	})
	t.Run("qpdf", func(t *testing.T) {
		for _, p := range []string{signedPath, certPath} {
			if out, err := sealRun("qpdf", "--check", p); err != nil {
				t.Fatalf("qpdf --check %s: %v\n%s", filepath.Base(p), err, out)
			}
		}
	})
	t.Run("pdfcpu", func(t *testing.T) { sealPdfcpuValidate(t, signed) })
	t.Run("certificate text", func(t *testing.T) {
		head, _, err := evidence.Verify(bytes.NewReader(bundle))
		if err != nil {
			t.Fatalf("bundle chain: %v", err)
		}
		sealCheckCertificate(t, certPath, st, signers, head)
		// the certificate is appended to the signed PDF too
		sealCheckCertificate(t, signedPath, st, signers, head)
	})
	t.Run("offline verifier", func(t *testing.T) {
		verifier := sealVerifier(t)
		// the level comes from the document alone (shared/pdf's tests take the PKI down)
		out, err := sealRun(verifier, "--pdf", signedPath, "--bundle", bundlePath, "--trust", svc.settings["SEAL_CERT_FILE"])
		if err != nil || !strings.Contains(out, "level: PAdES B-LTA") || !strings.Contains(out, "archive timestamp certificate expires") {
			t.Fatalf("esign-verify on the sealed outputs: %v\n%s", err, out)
		}
		tampered := sealFlipByte(t, signed)
		badPDF := sealWriteTemp(t, dir, "tampered.pdf", tampered)
		if out, err := sealRun(verifier, "--pdf", badPDF, "--bundle", bundlePath); err == nil || !strings.Contains(out, "FAILED") {
			t.Fatalf("esign-verify accepted a changed byte: %v\n%s", err, out)
		}
		if out, _ := sealRun("pdfsig", badPDF); strings.Contains(out, "Signature is Valid.") && strings.Contains(out, "Total document signed") {
			t.Fatalf("pdfsig accepted a changed byte:\n%s", out)
		}
		lines := bytes.SplitAfter(bytes.TrimRight(bundle, "\n"), []byte("\n"))
		if len(lines) < 3 {
			t.Fatalf("bundle has %d lines", len(lines))
		}
		cut := append(append([]byte{}, bytes.Join(lines[:1], nil)...), bytes.Join(lines[2:], nil)...)
		if _, _, err := evidence.Verify(bytes.NewReader(cut)); err == nil {
			t.Fatal("evidence.Verify accepted a bundle with a removed line")
		}
		cutPath := sealWriteTemp(t, dir, "cut.jsonl", cut)
		if out, err := sealRun(verifier, "--pdf", signedPath, "--bundle", cutPath); err == nil || !strings.Contains(out, "FAILED") {
			t.Fatalf("esign-verify accepted a bundle with a removed line: %v\n%s", err, out)
		}
	})
	t.Run("signature rows purged", func(t *testing.T) {
		r := sealWaitStatus(t, tenantA, corr, sealWait, "pii.purged", func(r reply) bool { return sealEventKinds(r)[esign.EvPIIPurged] > 0 })
		if n := sealEventKinds(r)[esign.EvSessionCompleted]; n != 1 {
			t.Fatalf("%d session.completed events", n)
		}
	})
	t.Run("notices", func(t *testing.T) {
		rows := sealWaitOutbox(t, corr, sealWait, "completion e-mails to both signers", func(rows []outbox.Row) bool {
			return sealCount(rows, notify.KindSignerCompleted, "") == len(signers)
		})
		for _, sg := range signers {
			if sealCount(rows, notify.KindSignerCompleted, sg.Email) != 1 {
				t.Fatalf("slot %d got %d completion e-mails", sg.Index, sealCount(rows, notify.KindSignerCompleted, sg.Email))
			}
		}
		if n := sealCount(rows, notify.KindDocumentsReady, ""); n != 0 {
			t.Fatalf("documents-ready notice without requestedByEmail: %d", n)
		}
	})
	t.Run("retry refused for a complete session", func(t *testing.T) {
		groupID := st.str("groupId")
		admin := bearer(svc.jwt(t, tenantA, "Service.Admin"))
		if r := call(t, "POST", svc.url("esign/session/"+groupID+"/seal/retry"), nil, admin); r.Status != http.StatusConflict || r.code() != "session_already_complete" {
			t.Fatalf("retry of a complete session: %d %s", r.Status, r.Raw)
		}
	})
	t.Run("duplicate seal message has no effect", func(t *testing.T) {
		sealDuplicate(t, st)
	})
}

// sealDuplicate enqueues the session's seal message again and checks nothing changes.
func sealDuplicate(t *testing.T, st reply) {
	paths := []string{st.str("signedDocumentPath"), st.str("certificatePath"), st.str("evidencePath")}
	etags := map[string]string{}
	for _, p := range paths {
		_, props := sealDownload(t, p)
		etags[p] = props.ETag
	}
	acct, err := azconn.New(azconn.Config{ConnectionString: svc.azurite.ConnectionString()})
	if err != nil {
		t.Fatal(err)
	}
	q, err := queuestore.New(acct, esign.QueueSeal)
	if err != nil {
		t.Fatal(err)
	}
	groupID := st.str("groupId")
	if _, err := q.Send(context.Background(), esign.SealMessage{GroupID: groupID, TenantID: tenantA}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(sealWait)
	for !strings.Contains(svc.logs.String(), "group "+groupID+" is already complete; duplicate message acknowledged") {
		if time.Now().After(deadline) {
			t.Fatal("the duplicate seal message was not handled")
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, p := range paths {
		if _, props := sealDownload(t, p); props.ETag != etags[p] {
			t.Fatalf("%s was rewritten by a duplicate message", p)
		}
	}
	r := status(t, tenantA, st.str("correlationId"))
	if n := sealEventKinds(r)[esign.EvSessionCompleted]; n != 1 || r.str("completedAt") != st.str("completedAt") {
		t.Fatalf("after the duplicate: %d session.completed, completedAt %q (was %q)", n, r.str("completedAt"), st.str("completedAt"))
	}
}

func TestSealFailureAndAdminRetry(t *testing.T) {
	t.Parallel()
	sealRequireTools(t)
	requester := email(9)
	var original []byte
	body, signers := sealSignAll(t, func(b map[string]any) {
		b["requestedByEmail"] = requester
		b["requestedBy"] = "Requester"
	}, func(b map[string]any) {
		original, _ = sealDownload(t, b["pdfBlobPath"].(string))
		sealPutBlob(t, b["pdfBlobPath"].(string), append(append([]byte{}, original...), []byte("\n% changed after create\n")...))
	})
	corr := body["correlationId"].(string)
	st := sealWaitStatus(t, tenantA, corr, sealWait, "sealError", func(r reply) bool { return r.str("sealError") != "" })
	if st.str("state") != "sealing" || sealEventKinds(st)[esign.EvSealFailed] != 1 ||
		!strings.Contains(st.str("sealError"), "SHA-256") {
		t.Fatalf("after a hash mismatch: state %q, sealError %q, events %v", st.str("state"), st.str("sealError"), sealEventKinds(st))
	}
	rows := sealWaitOutbox(t, corr, sealWait, "seal-failure notice", func(rows []outbox.Row) bool {
		return sealCount(rows, notify.KindSealFailure, requester) == 1
	})
	if n := sealCount(rows, notify.KindDocumentsReady, ""); n != 0 {
		t.Fatalf("documents-ready before sealing: %d", n)
	}
	groupID := st.str("groupId")
	retry := svc.url("esign/session/" + groupID + "/seal/retry")
	if r := call(t, "POST", retry, nil, bearer(svc.jwt(t, tenantA, "Esign.Initiator"))); r.Status != http.StatusForbidden {
		t.Fatalf("retry as initiator: %d %s", r.Status, r.Raw)
	}
	if r := call(t, "POST", retry, nil, bearer(svc.jwt(t, tenantB, "Service.Admin"))); r.Status != http.StatusNotFound {
		t.Fatalf("retry from another tenant: %d %s", r.Status, r.Raw)
	}
	sealPutBlob(t, body["pdfBlobPath"].(string), original)
	r := call(t, "POST", retry, nil, bearer(svc.jwt(t, tenantA, "Service.Admin")))
	if r.Status != http.StatusAccepted || r.JSON["attempt"] != float64(1) || r.str("state") != "sealing" {
		t.Fatalf("retry: %d %s", r.Status, r.Raw)
	}
	st = sealWaitStatus(t, tenantA, corr, sealWait, "complete after retry", sealComplete)
	kinds := sealEventKinds(st)
	if st.str("sealError") != "" || kinds[esign.EvSealRequeued] != 1 || kinds[esign.EvSessionCompleted] != 1 {
		t.Fatalf("after retry: sealError %q, events %v", st.str("sealError"), kinds)
	}
	signed, _ := sealDownload(t, st.str("signedDocumentPath"))
	out, _ := sealRun("pdfsig", sealWriteTemp(t, t.TempDir(), "signed.pdf", signed))
	if !strings.Contains(out, "Signature is Valid.") || !strings.Contains(out, "Total document signed") {
		t.Fatalf("pdfsig after retry:\n%s", out)
	}
	sealWaitOutbox(t, corr, sealWait, "documents-ready and completion e-mails", func(rows []outbox.Row) bool {
		return sealCount(rows, notify.KindDocumentsReady, requester) == 1 && sealCount(rows, notify.KindSignerCompleted, "") == len(signers)
	})
}

// sealCount counts outbox rows of a kind, to one recipient when to is set.
func sealCount(rows []outbox.Row, kind notify.Kind, to string) int {
	n := 0
	for _, r := range rows {
		if r.Kind == kind && (to == "" || strings.EqualFold(r.Recipient, to)) {
			n++
		}
	}
	return n
}

func sealPutBlob(t *testing.T, path string, b []byte) {
	t.Helper()
	i := strings.Index(path, "/")
	if _, err := blobs(t).Put(context.Background(), path[:i], path[i+1:], bytes.NewReader(b), "application/pdf", nil); err != nil {
		t.Fatal(err)
	}
}

// sealFlipByte changes one byte inside the signed range (the middle of the first page's data).
func sealFlipByte(t *testing.T, b []byte) []byte {
	t.Helper()
	out := append([]byte{}, b...)
	i := len(out) / 3
	for ; i < len(out); i++ {
		if unicode.IsLetter(rune(out[i])) { // a letter: still a PDF byte, different content
			break
		}
	}
	if out[i] == 'a' {
		out[i] = 'b'
	} else {
		out[i] = 'a'
	}
	if bytes.Equal(out, b) {
		t.Fatal("no byte changed")
	}
	return out
}

// sealCheckCertificate checks that the PDF's text holds every item the spec lists.
func sealCheckCertificate(t *testing.T, pdfPath string, st reply, signers []*sealSigner, head string) {
	t.Helper()
	out, err := exec.Command("pdftotext", "-layout", pdfPath, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	text := sealSquash(string(out))
	hasher, err := pii.ParseHashKey(svc.settings["PII_HASH_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	engine := call(t, "GET", svc.url("health"), nil, nil).str("engineVersion")
	exp, err := time.Parse(time.RFC3339Nano, st.str("expiresAt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"title":          "Contract 42",
		"correlation id": st.str("correlationId"),
		"SHA-256":        st.str("pdfHash"),
		"signing mode":   "Signing mode: parallel",
		"expiry":         certificate.FormatTime(exp),
		"engine version": "Engine version: " + engine,
		"tenant id":      tenantA,
		"head hash":      head,
	}
	slots, _ := st.JSON["slots"].([]any)
	for _, sg := range signers {
		p := fmt.Sprintf("signer %d ", sg.Index)
		want[p+"name"] = sg.Name
		want[p+"hashed e-mail"] = hasher.Email(sg.Email)
		want[p+"IP"] = sg.IP
		want[p+"user agent"] = sg.UserAgent
		tl, _ := slots[sg.Index].(map[string]any)["timeline"].(map[string]any)
		for _, state := range []string{"pending", "activated", "viewed", "signed"} {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(tl[state]))
			if err != nil {
				t.Fatalf("slot %d timeline %s: %v", sg.Index, state, err)
			}
			want[p+"timeline "+state] = state + ": " + certificate.FormatTime(at)
		}
		for i, c := range sg.Consents {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(c["acceptedAt"]))
			if err != nil {
				t.Fatalf("consent time: %v", err)
			}
			want[p+"consent time "+fmt.Sprint(i)] = "accepted " + certificate.FormatTime(at)
		}
	}
	for _, s := range esign.ConsentStatements {
		want["consent text "+s.ID] = s.Text
	}
	for item, v := range want {
		if v == "" {
			t.Errorf("%s: nothing to look for", item)
			continue
		}
		if !strings.Contains(text, sealSquash(v)) {
			t.Errorf("%s: %q not in the certificate text of %s", item, v, filepath.Base(pdfPath))
		}
	}
	if strings.Contains(string(out), "@example.test") {
		t.Errorf("a plain e-mail address is in %s", filepath.Base(pdfPath))
	}
}

// sealSquash drops all white space (the certificate wraps long values).
func sealSquash(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return -1
		}
		return r
	}, s)
}

var sealPdfcpuMu sync.Mutex // model.TrustedCertDir is a package variable

// sealPdfcpuValidate runs pdfcpu's validation and its signature validation. Like shared/pdf's
// tests it accepts status "unknown" only when pdfcpu's sole objection is the missing revocation
// evidence a dev seal certificate cannot have: no failure reason, document not modified,
// certified, no problems listed.
func sealPdfcpuValidate(t *testing.T, pdf []byte) {
	api.DisableConfigDir()
	if err := api.Validate(bytes.NewReader(pdf), model.NewDefaultConfiguration()); err != nil {
		t.Fatalf("pdfcpu validate: %v", err)
	}
	sealPdfcpuMu.Lock()
	defer sealPdfcpuMu.Unlock()
	dir := t.TempDir()
	if chain, err := os.ReadFile(svc.settings["SEAL_CERT_FILE"]); err == nil {
		sealWriteTemp(t, dir, "seal.pem", chain)
	}
	model.TrustedCertDir = dir
	results, err := api.ValidateSignaturesRaw(bytes.NewReader(pdf), true, model.NewDefaultConfiguration())
	if err != nil {
		t.Fatalf("pdfcpu signature validation: %v", err)
	}
	// a B-LTA seal (issue 25: make run's and these tests' development PKI) is the seal and its
	// archive document timestamp: pdfcpu may not resolve the timestamp's revocation (it refuses
	// loopback responders); it must find it invalid on nothing and the document unmodified
	var seals []*model.SignatureValidationResult
	for _, r := range results {
		if r.Signature.Type == model.SigTypeDTS {
			if r.Status == model.SignatureStatusInvalid || r.DocModified == model.True {
				t.Fatalf("pdfcpu: the archive timestamp: %v", r)
			}
			continue
		}
		seals = append(seals, r)
	}
	if len(seals) != 1 || len(results) != 2 {
		t.Fatalf("pdfcpu signature validation: %d results, %d seals; want the seal and its archive timestamp", len(results), len(seals))
	}
	r := seals[0]
	if r.Status == model.SignatureStatusValid {
		return
	}
	// pdfcpu v0.15.0 reports "valid" only with revocation evidence it fetches itself (it refuses
	// the development PKI's loopback responder and does not match the DSS's answers), does not
	// authenticate an embedded timestamp token, and judges no DocMDP permission once revisions
	// follow a certification ("unsupported", the document's modification "unknown"): the B-LTA
	// seal's DSS and archive timestamp revisions. Accept "unknown" when those are its only
	// objections; pdfsig and esign-verify check the signature and every revision.
	known := []string{"Certified signature detected. Permission validation not supported.",
		"pkcs7: embedded timestamp token observed but not fully authenticated", "certificate revocation check for serial="}
	problems := append([]string{}, r.Problems...)
	for _, sg := range r.Details.Signers {
		problems = append(problems, sg.Problems...)
	}
	unexpected := 0
	for _, p := range problems {
		if !slices.ContainsFunc(known, func(k string) bool { return strings.HasPrefix(p, k) }) {
			unexpected++
		}
	}
	if r.Status == model.SignatureStatusUnknown && (r.Reason == model.SignatureReasonUnknown || r.Reason == model.SignatureReasonUnsupported) &&
		unexpected == 0 && r.DocModified != model.True && r.Signature.Certified {
		return
	}
	t.Fatalf("pdfcpu signature validation: %v", results)
}

var (
	sealVerifierOnce sync.Once
	sealVerifierPath string
	sealVerifierErr  error
)

// sealVerifier builds processor/cmd/esign-verify once.
func sealVerifier(t *testing.T) string {
	t.Helper()
	sealVerifierOnce.Do(func() {
		dir, err := os.MkdirTemp("", "esign-verify-")
		if err != nil {
			sealVerifierErr = err
			return
		}
		sealVerifierPath = filepath.Join(dir, "esign-verify")
		cmd := exec.Command("go", "build", "-o", sealVerifierPath, "./processor/cmd/esign-verify")
		cmd.Dir, _ = filepath.Abs("../..")
		if out, err := cmd.CombinedOutput(); err != nil {
			sealVerifierErr = fmt.Errorf("%v: %s", err, out)
		}
	})
	if sealVerifierErr != nil {
		t.Fatalf("building esign-verify: %v", sealVerifierErr)
	}
	return sealVerifierPath
}
