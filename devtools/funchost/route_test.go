package funchost

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRouteMatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tmpl string
		path string
		want map[string]string // nil: no match
	}{
		{"api/esign/session/{correlationId}/status", "api/esign/session/abc/status", map[string]string{"correlationId": "abc"}},
		{"api/esign/session/{correlationId}/status", "API/Esign/SESSION/abc/status/", map[string]string{"correlationId": "abc"}},
		{"api/esign/session/{correlationId}/status", "api/esign/session/abc", nil},
		{"api/items/{id:int}", "api/items/42", map[string]string{"id": "42"}},
		{"api/items/{id:int}", "api/items/4x", nil},
		{"api/items/{id:int}", "api/items/99999999999", nil},
		{"api/items/{name:alpha}", "api/items/abc", map[string]string{"name": "abc"}},
		{"api/items/{name:alpha}", "api/items/ab1", nil},
		{"api/g/{id:guid}", "api/g/6f6a1c2e-1111-4a2b-8c3d-0123456789ab", map[string]string{"id": "6f6a1c2e-1111-4a2b-8c3d-0123456789ab"}},
		{"api/g/{id:guid}", "api/g/not-a-guid", nil},
		{"api/x/{id:regex(^a$)}", "api/x/zzz", map[string]string{"id": "zzz"}},
		{"api/opt/{x?}", "api/opt", map[string]string{}},
		{"api/opt/{x?}", "api/opt/1", map[string]string{"x": "1"}},
		{"api/opt/{x?}", "api/opt/1/2", nil},
		{"api/def/{x=7}", "api/def", map[string]string{"x": "7"}},
		{"api/files/{*path}", "api/files/a/b%20c/d.txt", map[string]string{"path": "a/b c/d.txt"}},
		{"api/files/{*path}", "api/files", map[string]string{}},
		{"api/enc/{v}", "api/enc/a%2Fb", map[string]string{"v": "a/b"}},
		{"", "", map[string]string{}},
		{"api", "api/more", nil},
	}
	for _, tc := range tests {
		t.Run(tc.tmpl+"|"+tc.path, func(t *testing.T) {
			t.Parallel()
			r, err := parseRoute(tc.tmpl)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := r.match(tc.path)
			if ok != (tc.want != nil) {
				t.Fatalf("match = %v, want %v", ok, tc.want != nil)
			}
			if ok {
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("values (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestRouteParseErrors(t *testing.T) {
	t.Parallel()
	for _, tmpl := range []string{"a//b", "a/{x?}/b", "a/{*rest}/b", "a/file.{ext}", "a/{}", "a/{x"} {
		t.Run(tmpl, func(t *testing.T) {
			t.Parallel()
			if _, err := parseRoute(tmpl); err == nil {
				t.Errorf("parseRoute(%q) gave no error", tmpl)
			}
		})
	}
}

func TestRoutePrecedence(t *testing.T) {
	t.Parallel()
	order := []string{"api/p/special", "api/p/{id:int}", "api/p/{id}", "api/p/{id?}", "api/p/{*rest}"}
	for i := 1; i < len(order); i++ {
		a, _ := parseRoute(order[i-1])
		b, _ := parseRoute(order[i])
		if !(a.precedence() < b.precedence()) {
			t.Errorf("%s should win over %s", order[i-1], order[i])
		}
	}
}
