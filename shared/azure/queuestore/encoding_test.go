package queuestore

import (
	"encoding/base64"
	"testing"
)

func TestEncodeMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    any
		want string // JSON; empty: refused
	}{
		{"struct", struct {
			A string `json:"a"`
		}{"x"}, `{"a":"x"}`},
		{"map", map[string]int{"n": 1}, `{"n":1}`},
		{"string", "eyJ9", ""},
		{"number", 7, ""},
		{"array", []string{"a"}, ""},
		{"null", nil, ""},
		{"unmarshalable", make(chan int), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := EncodeMessage(tc.v)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("EncodeMessage(%v) = %q, want an error", tc.v, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := DecodeMessage(got)
			if err != nil || string(b) != tc.want {
				t.Errorf("round trip = %s, %v; want %s", b, err, tc.want)
			}
			if got != base64.StdEncoding.EncodeToString([]byte(tc.want)) || EncodeRaw([]byte(tc.want)) != got {
				t.Errorf("encoding %q is not standard base64", got)
			}
		})
	}
	if _, err := DecodeMessage("%%%"); err == nil {
		t.Error("DecodeMessage accepted non-base64")
	}
}
