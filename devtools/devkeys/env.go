package devkeys

import (
	"sort"
	"strings"

	"github.com/esign-svc/esign/connector/settings"
)

// FormatEnv renders settings as shell `KEY=value` lines, sorted by key. Values with characters
// a shell would interpret (the storage connection string has ';') are single-quoted, so the file
// can be sourced (`set -a; . .local/dev.env; set +a`); ReadEnv undoes the quoting.
func FormatEnv(env map[string]string) []byte {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var sb strings.Builder
	sb.WriteString("# Written by devtools/cmd/devsetup on every run; edit the key files under keys/, not this file.\n")
	for _, k := range keys {
		sb.WriteString(k)
		sb.WriteByte('=')
		sb.WriteString(shellQuote(env[k]))
		sb.WriteByte('\n')
	}
	return []byte(sb.String())
}

func shellQuote(v string) string {
	safe := true
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("_./:@%+=,-", c)) {
			safe = false
			break
		}
	}
	if safe && v != "" {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

// ReadEnv parses a file written by FormatEnv (and plain KEY=value lines): blank lines and
// # comments are skipped, single or double quotes around a value are removed. It is the
// connector's settings-file reader (settings.ReadFile), which reads dev.env as is.
// Error: unreadable file or a line without '='.
func ReadEnv(path string) (map[string]string, error) { return settings.ReadFile(path) }
