package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// secrets are values the tests saw that must never reach a log line: e-mail addresses, portal
// links' tokens, access tokens, OTP codes, JWTs. checkLogs scans everything the host and both
// handlers printed during the run for them.
var secrets = struct {
	sync.Mutex
	values map[string]string // value -> what it is
}{values: map[string]string{}}

func remember(kind, value string) {
	if len(value) < 6 {
		return
	}
	secrets.Lock()
	secrets.values[value] = kind
	secrets.Unlock()
}

var emailLike = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.(test|com|org|net)`)

// leaked reports whether the logs hold v. A secret of digits only (an OTP code) counts as a
// number of its own, not as a run inside a longer number (a nanosecond timestamp, the fraction
// of an elapsed time), where six given digits turn up by chance in a long run's logs.
func leaked(logs, v string) bool {
	if strings.Trim(v, "0123456789") != "" {
		return strings.Contains(logs, v)
	}
	digit := func(i int) bool { return i >= 0 && i < len(logs) && logs[i] >= '0' && logs[i] <= '9' }
	// inNumber: the byte at i continues a number: a digit, or a decimal point between digits.
	inNumber := func(i, away int) bool {
		return digit(i) || (i >= 0 && i < len(logs) && logs[i] == '.' && digit(i+away))
	}
	for i := 0; ; {
		j := strings.Index(logs[i:], v)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(v)
		if !inNumber(start-1, -1) && !inNumber(end, 1) {
			return true
		}
		i = start + 1
	}
}

// checkLogs returns a description of every secret found in logs, or "".
func checkLogs(logs string) string {
	secrets.Lock()
	defer secrets.Unlock()
	var found []string
	for v, kind := range secrets.values {
		if leaked(logs, v) {
			found = append(found, fmt.Sprintf("a %s (%.12s...)", kind, v))
		}
	}
	if m := emailLike.FindString(logs); m != "" {
		found = append(found, "an e-mail address ("+m+")")
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("the logs of the run contain %d secrets: %s", len(found), strings.Join(found, "; "))
}

func TestLeakedTellsAnOTPFromADigitRun(t *testing.T) {
	for _, c := range []struct {
		logs string
		want bool
	}{
		{`"elapsed":2.770628`, false},
		{`at 2026-11-23T09:04:08.177062812Z`, false},
		{`code 770628 sent`, true},
		{`your code is 770628.`, true},
		{`"otp":"770628"`, true},
		{`770628`, true},
	} {
		if got := leaked(c.logs, "770628"); got != c.want {
			t.Errorf("leaked(%q) = %t, want %t", c.logs, got, c.want)
		}
	}
	if !leaked("a token eyJabc123 here", "eyJabc123") {
		t.Error("a token in the logs is not found")
	}
}
