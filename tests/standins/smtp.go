package standins

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/mail"
	"strconv"
	"sync"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
)

// SMTP is a submission server on a loopback port (github.com/emersion/go-smtp). It offers
// STARTTLS with a self-signed certificate and AUTH PLAIN only after it (go-smtp refuses AUTH on a
// plaintext connection), demands authentication before MAIL FROM, and keeps each accepted message
// with how its session was secured. A conversation that breaks the order (MAIL without AUTH, AUTH
// without TLS, wrong credentials) is refused with the SMTP reply a real server gives and noted in
// Refused.
type SMTP struct {
	Port       int
	User, Pass string

	srv *gosmtp.Server

	mu       sync.Mutex
	messages []SMTPMessage
	refused  []string
}

// SMTPMessage is one accepted message.
type SMTPMessage struct {
	From     string
	To       []string
	Data     []byte
	TLS      bool   // the session was under STARTTLS when DATA came
	AuthMech string // the AUTH mechanism that succeeded
	AuthUser string
}

// StartSMTP starts the server; Close stops it.
func StartSMTP(user, pass string) (*SMTP, error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, err
	}
	s := &SMTP{User: user, Pass: pass}
	s.srv = gosmtp.NewServer(s)
	s.srv.Domain = "localhost"
	s.srv.ReadTimeout, s.srv.WriteTimeout = 10*time.Second, 10*time.Second
	s.srv.MaxMessageBytes = 1 << 20
	s.srv.MaxRecipients = 10
	s.srv.ErrorLog = log.New(io.Discard, "", 0)
	s.srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops the server.
func (s *SMTP) Close() { _ = s.srv.Close() }

// PortString is the port as SMTP_PORT wants it.
func (s *SMTP) PortString() string { return strconv.Itoa(s.Port) }

// Messages are the accepted messages in arrival order.
func (s *SMTP) Messages() []SMTPMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SMTPMessage(nil), s.messages...)
}

// Refused lists the steps of a conversation the server refused, in order.
func (s *SMTP) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

func (s *SMTP) refuse(step string, err error) error {
	s.mu.Lock()
	s.refused = append(s.refused, step)
	s.mu.Unlock()
	return err
}

// NewSession is go-smtp's Backend.
func (s *SMTP) NewSession(c *gosmtp.Conn) (gosmtp.Session, error) {
	return &smtpSession{srv: s, conn: c}, nil
}

type smtpSession struct {
	srv  *SMTP
	conn *gosmtp.Conn
	cur  SMTPMessage
}

func (ss *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (ss *smtpSession) Auth(mech string) (sasl.Server, error) {
	if mech != sasl.Plain {
		return nil, ss.srv.refuse("AUTH "+mech, gosmtp.ErrAuthUnknownMechanism)
	}
	if _, ok := ss.conn.TLSConnectionState(); !ok {
		return nil, ss.srv.refuse("AUTH without TLS", gosmtp.ErrAuthUnsupported)
	}
	return sasl.NewPlainServer(func(identity, user, pass string) error {
		if identity != "" && identity != user {
			return ss.srv.refuse("AUTH identity", gosmtp.ErrAuthFailed)
		}
		if user != ss.srv.User || pass != ss.srv.Pass {
			return ss.srv.refuse("AUTH credentials", gosmtp.ErrAuthFailed)
		}
		ss.cur.AuthMech, ss.cur.AuthUser = mech, user
		return nil
	}), nil
}

func (ss *smtpSession) Mail(from string, _ *gosmtp.MailOptions) error {
	if ss.cur.AuthUser == "" {
		return ss.srv.refuse("MAIL before AUTH", gosmtp.ErrAuthRequired)
	}
	if _, err := mail.ParseAddress(from); err != nil {
		return ss.srv.refuse("MAIL FROM address", &gosmtp.SMTPError{Code: 553, EnhancedCode: gosmtp.EnhancedCode{5, 1, 7}, Message: "bad sender address"})
	}
	ss.cur.From = from
	return nil
}

func (ss *smtpSession) Rcpt(to string, _ *gosmtp.RcptOptions) error {
	if ss.cur.From == "" {
		return ss.srv.refuse("RCPT before MAIL", &gosmtp.SMTPError{Code: 503, EnhancedCode: gosmtp.EnhancedCode{5, 5, 1}, Message: "MAIL first"})
	}
	if _, err := mail.ParseAddress(to); err != nil {
		return ss.srv.refuse("RCPT TO address", &gosmtp.SMTPError{Code: 553, EnhancedCode: gosmtp.EnhancedCode{5, 1, 3}, Message: "bad recipient address"})
	}
	ss.cur.To = append(ss.cur.To, to)
	return nil
}

func (ss *smtpSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if len(ss.cur.To) == 0 {
		return ss.srv.refuse("DATA without RCPT", &gosmtp.SMTPError{Code: 503, EnhancedCode: gosmtp.EnhancedCode{5, 5, 1}, Message: "RCPT first"})
	}
	if _, err := mail.ReadMessage(bytes.NewReader(b)); err != nil {
		return ss.srv.refuse("DATA not a message", &gosmtp.SMTPError{Code: 554, EnhancedCode: gosmtp.EnhancedCode{5, 6, 0}, Message: "malformed message"})
	}
	m := ss.cur
	_, m.TLS = ss.conn.TLSConnectionState()
	m.Data = b
	ss.srv.mu.Lock()
	ss.srv.messages = append(ss.srv.messages, m)
	ss.srv.mu.Unlock()
	return nil
}

func (ss *smtpSession) Reset() {
	ss.cur = SMTPMessage{AuthMech: ss.cur.AuthMech, AuthUser: ss.cur.AuthUser}
}

func (ss *smtpSession) Logout() error { return nil }

// selfSigned makes a certificate for 127.0.0.1 and localhost.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "smtp stand-in"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("stand-in certificate: %w", err)
	}
	if der == nil {
		return tls.Certificate{}, errors.New("stand-in certificate: empty")
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
