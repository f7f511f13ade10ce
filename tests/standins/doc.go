// Package standins holds local stand-ins for the mail services the processor and dispatcher send
// through: an SMTP submission server, Azure Communication Services (e-mail and SMS) and the
// operator's notification service. Each checks the request the way the real service documents
// it, written independently of the senders in shared/notify, refuses what is malformed with the
// real service's answer, and keeps what it accepted for the test to read.
package standins
