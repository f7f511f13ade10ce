package seal

import (
	"testing"

	"github.com/esign-svc/esign/shared/apptest"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/funcproto"
)

// BenchmarkSealJob3Signers measures the whole seal job against Azurite: load the session,
// events and signatures, read and hash the source, stamp, certificate, PAdES signature, three
// blob writes, the completing transaction and the clean-up. Session set-up is not timed.
func BenchmarkSealJob3Signers(b *testing.B) {
	e := newEnv(b)
	h := funcproto.QueueHandler(e.job.Handle)
	signers := append(twoSigners(), signer{role: "witness", name: "Carol Witness"})
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		f := e.sealingSession(b, signers, "")
		msg := apptest.QueueData(b, esign.SealMessage{GroupID: f.sess.GroupID, TenantID: f.sess.TenantID})
		b.StartTimer()
		if r := apptest.Serve(b, h, msg); r.Status != 200 || len(notices(b, r)) != 4 {
			b.Fatalf("status %d, %d notices, logs %v", r.Status, len(notices(b, r)), r.Logs)
		}
	}
}
