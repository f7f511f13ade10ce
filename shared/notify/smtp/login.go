package smtp

import (
	"errors"
	"net/smtp"
	"strings"
)

// loginAuth is the AUTH LOGIN mechanism (not in net/smtp): the server prompts "Username:" and
// "Password:". Like smtp.PlainAuth it refuses to send credentials over a connection that is
// neither TLS nor to a loopback host, and to a server other than the configured one.
type loginAuth struct {
	username, password, host string
}

func (a *loginAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !server.TLS && !isLoopback(server.Name) {
		return "", nil, errors.New("smtp: refusing AUTH LOGIN over an unencrypted connection")
	}
	if server.Name != a.host {
		return "", nil, errors.New("smtp: wrong host name")
	}
	return "LOGIN", nil, nil
}

func (a *loginAuth) Next(fromServer []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	switch strings.ToLower(strings.TrimSpace(string(fromServer))) {
	case "username:", "username":
		return []byte(a.username), nil
	case "password:", "password":
		return []byte(a.password), nil
	}
	return nil, errors.New("smtp: unexpected AUTH LOGIN prompt")
}
