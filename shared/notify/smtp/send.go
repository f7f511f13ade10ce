package smtp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/notify"
	"github.com/esign-svc/esign/shared/settings"
)

// Stable error codes Send returns (in *apperr.Error): notify's, which every provider shares.
const (
	// CodeUnavailable: the server could not be reached, timed out, answered a 4xx (transient)
	// reply, or does not offer what the configuration requires (STARTTLS, AUTH). KindUnavailable.
	CodeUnavailable = notify.CodeUnavailable
	// CodeRefused: the server answered a permanent 5xx reply to the envelope or the message.
	// KindInvalid.
	CodeRefused = notify.CodeRefused
	// CodeAuthRefused: the server refused the credentials. KindInvalid.
	CodeAuthRefused = notify.CodeAuthRefused
	// CodeInvalidMessage: the Message cannot be sent (not an e-mail, bad recipient, a line break
	// in a header value). KindInvalid.
	CodeInvalidMessage = notify.CodeInvalidMessage
)

// Sender delivers notify.Email messages over SMTP, one session per message.
type Sender struct {
	cfg Config
}

var _ notify.Sender = (*Sender)(nil)

// New checks cfg and makes a Sender; the error names the setting at fault.
func New(cfg Config) (*Sender, error) {
	switch {
	case cfg.Host == "":
		return nil, fmt.Errorf("smtp: setting %s: is required", SettingHost)
	case cfg.Port <= 0 || cfg.Port > 65535:
		return nil, fmt.Errorf("smtp: setting %s: must be from 1 to 65535", SettingPort)
	case cfg.From.Address == "":
		return nil, fmt.Errorf("smtp: setting %s: is required", SettingFrom)
	case cfg.Insecure && !isLoopback(cfg.Host):
		return nil, fmt.Errorf("smtp: setting %s: may be true only when %s is a loopback host", SettingInsecure, SettingHost)
	case (cfg.Username == "") != (cfg.Password == ""):
		return nil, fmt.Errorf("smtp: setting %s: set both %s and %s, or neither", SettingPassword, SettingUsername, SettingPassword)
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Sender{cfg: cfg}, nil
}

// NewFromLookup reads the SMTP settings (see ConfigFromLookup) and returns the sender.
func NewFromLookup(lookup settings.Lookup) (notify.Sender, error) {
	cfg, err := ConfigFromLookup(lookup)
	if err != nil {
		return nil, err
	}
	return New(cfg)
}

// Send delivers one e-mail. Errors are *apperr.Error with the codes above; none carries the
// recipient, the body, the password or the server's reply text (which often repeats the
// recipient), only the reply code.
func (s *Sender) Send(ctx context.Context, m notify.Message) error {
	if err := m.Validate(); err != nil {
		return apperr.Wrap(err, apperr.KindInvalid, CodeInvalidMessage, "the message cannot be sent")
	}
	if m.Channel != notify.Email {
		return apperr.New(apperr.KindInvalid, CodeInvalidMessage, "the SMTP sender got a %s message", m.Channel)
	}
	to, err := mail.ParseAddress(m.To)
	if err != nil || to.Name != "" || to.Address != strings.TrimSpace(m.To) {
		return apperr.Invalid(CodeInvalidMessage, apperr.Field("to", "not a bare e-mail address"))
	}
	msg, err := buildMessage(s.cfg.From, to.Address, m.Subject, m.Text, m.HTML, s.cfg.Now())
	if errors.Is(err, errHeaderBreak) {
		return apperr.Invalid(CodeInvalidMessage, apperr.Field("subject", "must be one line"))
	} else if err != nil {
		return apperr.Wrap(err, apperr.KindInternal, notify.CodeRequest, "build the message")
	}
	return s.deliver(ctx, to.Address, msg)
}

func (s *Sender) deliver(ctx context.Context, to string, msg []byte) error {
	addr := net.JoinHostPort(s.cfg.Host, strconv.Itoa(s.cfg.Port))
	dialer := net.Dialer{Timeout: s.cfg.DialTimeout}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "SMTP server unreachable")
	}
	defer conn.Close()
	deadline := time.Now().Add(s.cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()

	if s.cfg.Port == 465 { // implicit TLS (SMTPS)
		tc := tls.Client(conn, s.tlsConfig())
		if err := tc.HandshakeContext(ctx); err != nil {
			return apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "SMTP TLS handshake failed")
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, s.cfg.Host)
	if err != nil {
		return replyError(err, "greeting")
	}
	defer c.Close()
	if err := c.Hello(heloName()); err != nil {
		return replyError(err, "EHLO")
	}
	if _, isTLS := conn.(*tls.Conn); !isTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(s.tlsConfig()); err != nil {
				return replyError(err, "STARTTLS")
			}
		} else if !s.cfg.Insecure {
			return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the SMTP server does not offer STARTTLS (set %s=true only for a loopback test server)", SettingInsecure)
		}
	}
	if s.cfg.Username != "" {
		if err := s.auth(c); err != nil {
			return err
		}
	}
	if err := c.Mail(s.cfg.From.Address); err != nil {
		return replyError(err, "MAIL FROM")
	}
	if err := c.Rcpt(to); err != nil {
		return replyError(err, "RCPT TO")
	}
	w, err := c.Data()
	if err != nil {
		return replyError(err, "DATA")
	}
	if _, err := w.Write(msg); err != nil {
		return replyError(err, "DATA")
	}
	if err := w.Close(); err != nil {
		return replyError(err, "end of DATA")
	}
	_ = c.Quit() // the message is accepted; a failed QUIT changes nothing
	return nil
}

func (s *Sender) tlsConfig() *tls.Config {
	return &tls.Config{
		ServerName:         s.cfg.Host,
		RootCAs:            s.cfg.RootCAs,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: s.cfg.Insecure, // loopback only (checked in New)
	}
}

// auth picks PLAIN, else LOGIN, from what the server offers.
func (s *Sender) auth(c *smtp.Client) error {
	ok, params := c.Extension("AUTH")
	if !ok {
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the SMTP server does not offer AUTH but %s is set", SettingUsername)
	}
	mechs := strings.Fields(strings.ToUpper(params))
	var a smtp.Auth
	switch {
	case contains(mechs, "PLAIN"):
		a = smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, s.cfg.Host)
	case contains(mechs, "LOGIN"):
		a = &loginAuth{username: s.cfg.Username, password: s.cfg.Password, host: s.cfg.Host}
	default:
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the SMTP server offers neither AUTH PLAIN nor LOGIN")
	}
	if err := c.Auth(a); err != nil {
		var tp *textproto.Error
		if errors.As(err, &tp) && tp.Code >= 500 {
			return apperr.New(apperr.KindInvalid, CodeAuthRefused, "the SMTP server refused the credentials (%d)", tp.Code)
		}
		return replyError(err, "AUTH")
	}
	return nil
}

// replyError maps an SMTP exchange failure: a 5xx reply is permanent (KindInvalid), a 4xx reply
// or a network failure is worth retrying (KindUnavailable). The reply text is dropped.
func replyError(err error, step string) error {
	var tp *textproto.Error
	if errors.As(err, &tp) {
		if tp.Code >= 500 {
			return apperr.New(apperr.KindInvalid, CodeRefused, "the SMTP server refused %s (%d)", step, tp.Code)
		}
		return apperr.New(apperr.KindUnavailable, CodeUnavailable, "the SMTP server deferred %s (%d)", step, tp.Code)
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
		return apperr.Wrap(err, apperr.KindUnavailable, CodeUnavailable, "SMTP %s failed", step)
	}
	// Anything else (TLS verification, a protocol error) is described without the cause's text,
	// which for net/smtp can quote what it sent.
	return apperr.New(apperr.KindUnavailable, CodeUnavailable, "SMTP %s failed: %s", step, errorClass(err))
}

// errorClass names an error's kind without its text.
func errorClass(err error) string {
	var cv *tls.CertificateVerificationError
	switch {
	case errors.As(err, &cv):
		return "server certificate not trusted"
	case strings.Contains(err.Error(), "tls"):
		return "TLS error"
	}
	return "protocol error"
}

func heloName() string {
	if h, err := os.Hostname(); err == nil && h != "" && !strings.ContainsAny(h, " \r\n") {
		return h
	}
	return "localhost"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
