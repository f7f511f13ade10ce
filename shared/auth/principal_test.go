package auth

import "testing"

func TestCallerIDIsOIDElseSub(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		p    Principal
		want string
	}{
		{Principal{Subject: "sub-1", ObjectID: "oid-1"}, "oid-1"},
		{Principal{Subject: "sub-1"}, "sub-1"},
		{Principal{}, ""},
	} {
		if got := tc.p.CallerID(); got != tc.want {
			t.Errorf("%+v: CallerID %q, want %q", tc.p, got, tc.want)
		}
	}
}
