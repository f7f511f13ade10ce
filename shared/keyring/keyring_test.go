package keyring

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	k32 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))
	k32url := base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb}, 32))
	k16 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{2}, 16))
	tests := []struct {
		name    string
		setting string
		exact   int
		wantIDs []string
		wantErr string
	}{
		{"one", "k1:" + k32, 0, []string{"k1"}, ""},
		{"two with spaces", " k2:" + k32 + " , k1:" + k32url + " ", 0, []string{"k2", "k1"}, ""},
		{"exact ok", "a:" + k32, 32, []string{"a"}, ""},
		{"empty", "  ", 0, nil, "empty"},
		{"no colon", "k1" + k32, 0, nil, "want kid:base64key"},
		{"bad base64", "k1:***", 0, nil, "not valid base64"},
		{"short", "k1:" + k16, 0, nil, "at least 32 bytes"},
		{"not exact", "k1:" + base64.StdEncoding.EncodeToString(make([]byte, 48)), 32, nil, "exactly 32"},
		{"dup", "k1:" + k32 + ",k1:" + k32, 0, nil, "duplicate"},
		{"bad id", "k/1:" + k32, 0, nil, "key id"},
		{"empty id", ":" + k32, 0, nil, "key id"},
		{"empty entry", "k1:" + k32 + ",", 0, nil, "entry 2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, err := Parse(tc.setting, 32, tc.exact)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), k32) {
					t.Fatalf("error leaks key material: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(r.IDs(), ","); got != strings.Join(tc.wantIDs, ",") {
				t.Fatalf("ids = %s, want %v", got, tc.wantIDs)
			}
			if r.Current().ID != tc.wantIDs[0] {
				t.Fatalf("current = %s", r.Current().ID)
			}
			for _, id := range tc.wantIDs {
				if s, ok := r.Lookup(id); !ok || len(s) != 32 {
					t.Fatalf("lookup %s = %d bytes, %v", id, len(s), ok)
				}
			}
			if _, ok := r.Lookup("nope"); ok {
				t.Fatal("unknown id found")
			}
		})
	}
}

func TestFormatRoundTrip(t *testing.T) {
	t.Parallel()
	keys := []Key{{ID: "a", Secret: bytes.Repeat([]byte{7}, 32)}, {ID: "b.2", Secret: bytes.Repeat([]byte{9}, 40)}}
	r, err := Parse(Format(keys...), 32, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		got, ok := r.Lookup(k.ID)
		if !ok || !bytes.Equal(got, k.Secret) {
			t.Fatalf("key %s did not round-trip", k.ID)
		}
	}
}

func TestNewCopiesSecrets(t *testing.T) {
	t.Parallel()
	s := bytes.Repeat([]byte{3}, 32)
	r, err := New(32, 0, Key{ID: "x", Secret: s})
	if err != nil {
		t.Fatal(err)
	}
	s[0] = 99
	if got, _ := r.Lookup("x"); got[0] != 3 {
		t.Fatal("ring shares the caller's slice")
	}
}
