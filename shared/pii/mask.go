package pii

import "strings"

// MaskEmail hides an address for display in evidence: the first character of the local part,
// the first character of the domain and its last label, with fixed-width stars so the length
// does not leak: "john.doe@example.com" -> "j***@e***.com". Anything that is not shaped like
// an address becomes "***".
func MaskEmail(email string) string {
	email = strings.TrimSpace(email)
	at := strings.LastIndexByte(email, '@')
	if at <= 0 || at == len(email)-1 {
		return "***"
	}
	local, domain := email[:at], email[at+1:]
	out := firstRune(local) + "***@" + firstRune(domain) + "***"
	if dot := strings.LastIndexByte(domain, '.'); dot > 0 && dot < len(domain)-1 {
		out += domain[dot:]
	}
	return out
}

// MaskPhone hides a phone number: "+" and the first two digits, six stars, the last two digits:
// "+33612345678" -> "+33******78". Numbers with fewer than six digits become "***".
func MaskPhone(phone string) string {
	var digits []byte
	for i := 0; i < len(phone); i++ {
		if c := phone[i]; c >= '0' && c <= '9' {
			digits = append(digits, c)
		}
	}
	if len(digits) < 6 {
		return "***"
	}
	prefix := ""
	if strings.HasPrefix(strings.TrimSpace(phone), "+") {
		prefix = "+"
	}
	return prefix + string(digits[:2]) + "******" + string(digits[len(digits)-2:])
}

func firstRune(s string) string {
	for _, r := range s {
		return string(r)
	}
	return ""
}
