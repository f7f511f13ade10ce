package browser

import (
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// What the tests saw of signers and recipients (addresses, phone numbers, link tokens, OTP
// codes): none of it may appear in what the service printed while the pages worked (TestMain
// checks once every test ran).
var seen = struct {
	sync.Mutex
	values map[string]string // value -> kind
}{values: map[string]string{}}

func remember(kind, value string) {
	if len(value) < 6 {
		return
	}
	seen.Lock()
	seen.values[value] = kind
	seen.Unlock()
}

// rememberLink remembers the tokens of a portal link (token, t, pt).
func rememberLink(link string) {
	u, err := url.Parse(link)
	if err != nil {
		return
	}
	for _, k := range []string{"token", "t", "pt"} {
		remember("link token", u.Query().Get(k))
	}
}

// leaks names the kinds of remembered values found in logs. A code of digits counts only as a
// number standing alone (`"123456"`, `code=123456`), not as digits inside a longer number or
// identifier, where six given digits turn up by chance.
func leaks(logs string) []string {
	seen.Lock()
	defer seen.Unlock()
	found := map[string]bool{}
	for v, kind := range seen.values {
		if strings.Trim(v, "0123456789") == "" {
			if regexp.MustCompile(`(^|[^0-9A-Za-z.])` + v + `([^0-9A-Za-z]|$)`).MatchString(logs) {
				found[kind] = true
			}
		} else if strings.Contains(logs, v) {
			found[kind] = true
		}
	}
	var out []string
	for k := range found {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
