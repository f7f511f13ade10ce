package pii

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/apperr"
	"github.com/esign-svc/esign/shared/keyring"
)

func encSetting(keys ...keyring.Key) string { return keyring.Format(keys...) }

func TestEmailHash(t *testing.T) {
	t.Parallel()
	h, err := ParseHashKey(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{5}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	a := h.Email("  John.Doe@Example.COM ")
	if a != h.Email("john.doe@example.com") {
		t.Fatal("normalisation does not make the hashes equal")
	}
	if len(a) != 64 || strings.Trim(a, "0123456789abcdef") != "" {
		t.Fatalf("hash %q is not lowercase hex sha256", a)
	}
	if a == h.Email("jane@example.com") {
		t.Fatal("different addresses hash the same")
	}
	other, _ := NewHasher(bytes.Repeat([]byte{6}, 32))
	if a == other.Email("john.doe@example.com") {
		t.Fatal("hash does not depend on the key")
	}
	if h.Hash("otp", "123456") == h.Hash("email", "123456") {
		t.Fatal("purposes are not separated")
	}
	if !h.Matches("otp", "123456", h.Hash("otp", "123456")) || h.Matches("otp", "123457", h.Hash("otp", "123456")) {
		t.Fatal("Matches wrong")
	}
	if _, err := NewHasher(make([]byte, 31)); err == nil {
		t.Fatal("short key accepted")
	}
	if _, err := ParseHashKey("not base64 !"); err == nil {
		t.Fatal("bad base64 accepted")
	}
}

func TestCipher(t *testing.T) {
	t.Parallel()
	k1 := keyring.Key{ID: "e1", Secret: bytes.Repeat([]byte{1}, 32)}
	k2 := keyring.Key{ID: "e2", Secret: bytes.Repeat([]byte{2}, 32)}
	old, err := ParseCipher(encSetting(k1))
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := ParseCipher(encSetting(k2, k1))
	if err != nil {
		t.Fatal(err)
	}
	aad := AAD("group-1", "0", "email")
	ct, err := old.EncryptString("john@example.com", aad)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ct, "v1.e1.") || strings.Contains(ct, "john") {
		t.Fatalf("ciphertext %q", ct)
	}
	if kid, err := KeyID(ct); err != nil || kid != "e1" {
		t.Fatalf("KeyID = %q, %v", kid, err)
	}
	ct2, _ := old.EncryptString("john@example.com", aad)
	if ct == ct2 {
		t.Fatal("nonce reused: equal ciphertexts")
	}
	for name, c := range map[string]*Cipher{"same ring": old, "rotated ring": rotated} {
		got, err := c.DecryptString(ct, aad)
		if err != nil || got != "john@example.com" {
			t.Fatalf("%s: got %q, %v", name, got, err)
		}
	}
	ctNew, _ := rotated.EncryptString("x", aad)
	if !strings.HasPrefix(ctNew, "v1.e2.") {
		t.Fatalf("rotated ring did not encrypt with its first key: %q", ctNew)
	}

	raw := strings.SplitN(ct, ".", 3)[2]
	flipped := []byte(raw)
	flipped[len(flipped)-3] ^= 'A' ^ 'B'
	failures := map[string]struct {
		c   *Cipher
		ct  string
		aad []byte
	}{
		"wrong aad (other slot)": {old, ct, AAD("group-1", "1", "email")},
		"aad ambiguity":          {old, ct, AAD("group-1|0", "email")},
		"no aad":                 {old, ct, nil},
		"unknown kid":            {old, ctNew, aad},
		"key removed":            {mustCipher(t, encSetting(k2)), ct, aad},
		"tampered":               {old, "v1.e1." + string(flipped), aad},
		"kid swapped":            {rotated, "v1.e2." + raw, aad},
		"wrong version":          {old, "v2" + ct[2:], aad},
		"not a ciphertext":       {old, "john@example.com", aad},
		"truncated":              {old, ct[:20], aad},
		"padded base64":          {old, ct + "=", aad},
		"empty":                  {old, "", aad},
	}
	for name, tc := range failures {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.c.Decrypt(tc.ct, tc.aad)
			e, ok := apperr.As(err)
			if !ok || e.Code != CodeDecrypt {
				t.Fatalf("err = %v, want %s", err, CodeDecrypt)
			}
			if strings.Contains(err.Error(), "john") {
				t.Fatal("error leaks plaintext")
			}
		})
	}
	if _, err := ParseCipher("e1:" + base64.StdEncoding.EncodeToString(make([]byte, 16))); err == nil {
		t.Fatal("AES-128 key accepted")
	}
}

func mustCipher(t *testing.T, s string) *Cipher {
	c, err := ParseCipher(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestMask(t *testing.T) {
	t.Parallel()
	emails := map[string]string{
		"john.doe@example.com": "j***@e***.com",
		" Jane@mail.co.uk ":    "J***@m***.uk",
		"a@b":                  "a***@b***",
		"élodie@exemple.fr":    "é***@e***.fr",
		"nobody":               "***",
		"@example.com":         "***",
		"x@":                   "***",
		"":                     "***",
	}
	for in, want := range emails {
		if got := MaskEmail(in); got != want {
			t.Errorf("MaskEmail(%q) = %q, want %q", in, got, want)
		}
	}
	phones := map[string]string{
		"+33612345678":      "+33******78",
		"+1 (415) 555-0100": "+14******00",
		"0612345678":        "06******78",
		"+123":              "***",
		"":                  "***",
	}
	for in, want := range phones {
		if got := MaskPhone(in); got != want {
			t.Errorf("MaskPhone(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAADUnambiguous(t *testing.T) {
	t.Parallel()
	if bytes.Equal(AAD("a|b", "c"), AAD("a", "b|c")) || bytes.Equal(AAD("ab"), AAD("a", "b")) {
		t.Fatal("AAD is ambiguous")
	}
}

func BenchmarkEncryptDecrypt(b *testing.B) {
	c, _ := ParseCipher(encSetting(keyring.Key{ID: "e1", Secret: bytes.Repeat([]byte{1}, 32)}))
	aad := AAD("g", "0")
	b.ReportAllocs()
	for b.Loop() {
		ct, _ := c.EncryptString("john.doe@example.com", aad)
		if _, err := c.Decrypt(ct, aad); err != nil {
			b.Fatal(err)
		}
	}
}
