package settings

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

// ReadFile reads KEY=value lines (blank lines and # comments skipped, `export ` allowed, one pair
// of single or double quotes around a value removed): the shape of .local/dev.env, so a file
// written for `make run` works as is. Errors: unreadable file, or a line without '=' (named by
// its number).
func ReadFile(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("settings file: %w", err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("%s:%d: want KEY=value", path, n)
		}
		out[strings.TrimSpace(k)] = unquote(v)
	}
	return out, sc.Err()
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
