package delivery

import (
	"strings"
	"testing"

	"github.com/esign-svc/esign/shared/config"
)

func TestGraphClientFromLookup(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		settings map[string]string
		client   bool
		errName  string
	}{
		{"none: no library upload", nil, false, ""},
		{"client secret", map[string]string{"GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": "s"}, true, ""},
		{"managed identity", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true"}, true, ""},
		{"user-assigned identity", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_IDENTITY_CLIENT_ID": "11111111-1111-1111-1111-111111111111"}, true, ""},
		{"both", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "true", "GRAPH_TENANT_ID": "t", "GRAPH_CLIENT_ID": "c", "GRAPH_CLIENT_SECRET": "s"}, false, "GRAPH_USE_MANAGED_IDENTITY"},
		{"not a bool", map[string]string{"GRAPH_USE_MANAGED_IDENTITY": "perhaps"}, false, "GRAPH_USE_MANAGED_IDENTITY"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cl, err := GraphClientFromLookup(config.MapLookup(tc.settings))
			if tc.errName != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errName) {
					t.Fatalf("want an error naming %s, got %v", tc.errName, err)
				}
				return
			}
			if err != nil || (cl != nil) != tc.client {
				t.Fatalf("client %v, err %v", cl != nil, err)
			}
		})
	}
}
