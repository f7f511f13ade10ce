// Package licencetest makes verified licences for tests: a fresh operator key, the features
// asked for, valid for a day.
package licencetest

import (
	"crypto/ed25519"
	"crypto/rand"
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

func sign(features []licence.Feature) (*licence.Licence, error) {
	if len(features) == 0 {
		features = licence.AllFeatures
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	tok, err := licence.Sign(priv, licence.Claims{Issuer: "test", CustomerID: "test", Features: features,
		ExpiresAt: time.Now().Add(24 * time.Hour).Unix()})
	if err != nil {
		return nil, err
	}
	return licence.Parse(tok, pub)
}
