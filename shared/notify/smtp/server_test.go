package smtp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// testServer is a real SMTP server (github.com/emersion/go-smtp) on a loopback port that
// records what it received and how the session was secured and authenticated.
type testServer struct {
	port  int
	roots *x509.CertPool // trusts the server's self-signed certificate

	user, pass string
	mechs      []string          // AUTH mechanisms offered
	rcptErr    *gosmtp.SMTPError // answer to RCPT TO, nil accepts

	mu       sync.Mutex
	received []received
	authSeen []string // mechanisms clients tried
}

type received struct {
	From     string
	To       []string
	Data     []byte
	TLS      bool
	AuthMech string
	AuthUser string
}

type serverOptions struct {
	tls   bool     // offer STARTTLS
	mechs []string // AUTH mechanisms; nil offers none
}

func startServer(t *testing.T, opts serverOptions) *testServer {
	t.Helper()
	ts := &testServer{user: "mailer", pass: "s3cret-pässword", mechs: opts.mechs}
	s := gosmtp.NewServer(ts)
	s.Domain = "localhost"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	s.MaxMessageBytes = 1 << 20
	s.ErrorLog = log.New(io.Discard, "", 0)
	if opts.tls {
		cert, pool := selfSigned(t)
		s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ts.roots = pool
	} else {
		s.AllowInsecureAuth = true
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.port = l.Addr().(*net.TCPAddr).Port
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return ts
}

func (ts *testServer) messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.received...)
}

func (ts *testServer) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &session{ts: ts, conn: c}, nil
}

type session struct {
	ts   *testServer
	conn *gosmtp.Conn
	cur  received
}

func (s *session) AuthMechanisms() []string { return s.ts.mechs }

func (s *session) Auth(mech string) (sasl.Server, error) {
	s.ts.mu.Lock()
	s.ts.authSeen = append(s.ts.authSeen, mech)
	s.ts.mu.Unlock()
	check := func(user, pass string) error {
		if user != s.ts.user || pass != s.ts.pass {
			return gosmtp.ErrAuthFailed
		}
		s.cur.AuthMech, s.cur.AuthUser = mech, user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(identity, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, gosmtp.ErrAuthUnknownMechanism
}

func (s *session) Mail(from string, _ *gosmtp.MailOptions) error {
	if len(s.ts.mechs) > 0 && s.cur.AuthUser == "" {
		return gosmtp.ErrAuthRequired
	}
	s.cur.From = from
	return nil
}

func (s *session) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if s.ts.rcptErr != nil {
		return s.ts.rcptErr
	}
	s.cur.To = append(s.cur.To, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, s.cur.TLS = s.conn.TLSConnectionState()
	s.cur.Data = b
	s.ts.mu.Lock()
	s.ts.received = append(s.ts.received, s.cur)
	s.ts.mu.Unlock()
	return nil
}

func (s *session) Reset()        { s.cur = received{AuthMech: s.cur.AuthMech, AuthUser: s.cur.AuthUser} }
func (s *session) Logout() error { return nil }

// loginServer is the server side of AUTH LOGIN (go-sasl ships only the client).
type loginServer struct {
	step  int
	user  string
	check func(user, pass string) error
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	switch l.step {
	case 0:
		l.step = 1
		return []byte("Username:"), false, nil
	case 1:
		l.user, l.step = string(resp), 2
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

// selfSigned makes a certificate for 127.0.0.1 and localhost and a pool that trusts it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "smtp test"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
