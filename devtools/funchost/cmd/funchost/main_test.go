package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadEnvFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       map[string]string
		ok         bool
	}{
		{"lines", "# comment\n\nA=1\nexport B=\"two words\"\nC='x=y'\nD=\n", map[string]string{"A": "1", "B": "two words", "C": "x=y", "D": ""}, true},
		{"connection string keeps its equals signs", "AzureWebJobsStorage=AccountKey=abc==;X=y\n", map[string]string{"AzureWebJobsStorage": "AccountKey=abc==;X=y"}, true},
		{"no equals", "JUSTAKEY\n", nil, false},
		{"empty key", "=v\n", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(t.TempDir(), "dev.env")
			if err := os.WriteFile(p, []byte(tc.text), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := readEnvFile(p)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if diff := cmp.Diff(tc.want, got); tc.ok && diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
