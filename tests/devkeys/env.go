package devkeys

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
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
	sb.WriteString("# Written by tests/cmd/devsetup on every run; edit the key files under keys/, not this file.\n")
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
// # comments are skipped, single or double quotes around a value are removed.
// Error: unreadable file or a line without '='.
func ReadEnv(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=value", path, n)
		}
		env[k] = unquote(v)
	}
	return env, sc.Err()
}

func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return strings.ReplaceAll(v[1:len(v)-1], `'\''`, "'")
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		return v[1 : len(v)-1]
	}
	return v
}
