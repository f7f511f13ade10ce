// Package licencetest makes verified licences for tests: a fresh operator key, the features
// asked for, valid for a day.
package licencetest

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"testing"
	"time"

	"github.com/esign-svc/esign/shared/licence"
)

// New is a current licence listing features (every feature when none is given).
func New(tb testing.TB, features ...licence.Feature) *licence.Licence {
	tb.Helper()
	l, err := sign(features)
	if err != nil {
		tb.Fatal(err)
	}
	return l
}

// MustNew is New for a package-level variable: it panics where New fails the test.
func MustNew(features ...licence.Feature) *licence.Licence {
	l, err := sign(features)
	if err != nil {
		panic(err)
	}
	return l
}

// MustSettings are an app's licence settings (LICENCE and LICENCE_PUBLIC_KEY) of a current
// licence listing features (every feature when none is given). It panics where signing fails.
func MustSettings(features ...licence.Feature) map[string]string {
	tok, pub, err := token(features)
	if err != nil {
		panic(err)
	}
	return map[string]string{licence.SettingText: tok, licence.SettingPublicKey: base64.StdEncoding.EncodeToString(pub)}
}

func sign(features []licence.Feature) (*licence.Licence, error) {
	tok, pub, err := token(features)
	if err != nil {
		return nil, err
	}
	return licence.Parse(tok, pub)
}

func token(features []licence.Feature) (string, ed25519.PublicKey, error) {
	if len(features) == 0 {
		features = licence.AllFeatures
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", nil, err
	}
	tok, err := licence.Sign(priv, licence.Claims{Issuer: "test", CustomerID: "test", Features: features,
		ExpiresAt: time.Now().Add(24 * time.Hour).Unix()})
	return tok, pub, err
}
