package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
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

// checkLogs returns a description of every secret found in logs, or "".
func checkLogs(logs string) string {
	secrets.Lock()
	defer secrets.Unlock()
	var found []string
	for v, kind := range secrets.values {
		if strings.Contains(logs, v) {
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
