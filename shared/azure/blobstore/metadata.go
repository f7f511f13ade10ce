package blobstore

import (
	"strings"

	"github.com/esign-svc/esign/shared/apperr"
)

// toMetadata checks metadata keys (C# identifiers: a letter or '_' then letters, digits, '_')
// and ASCII values, as the service requires, and converts to the SDK's form.
func toMetadata(m map[string]string) (map[string]*string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		if !validMetadataKey(k) {
			return nil, apperr.Invalid("invalid_blob_metadata", apperr.Field("metadata", "keys must start with a letter or '_' and hold only letters, digits and '_'"))
		}
		for i := 0; i < len(v); i++ {
			if v[i] < 0x20 || v[i] > 0x7e {
				return nil, apperr.Invalid("invalid_blob_metadata", apperr.Field("metadata."+k, "values must be printable ASCII"))
			}
		}
		v := v
		out[strings.ToLower(k)] = &v
	}
	return out, nil
}

func fromMetadata(m map[string]*string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if v != nil {
			out[strings.ToLower(k)] = *v
		}
	}
	return out
}

func validMetadataKey(k string) bool {
	if k == "" || len(k) > 256 {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		letter := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}
