package tablestore

import (
	"fmt"
	"strings"
	"unicode/utf16"

	"github.com/esign-svc/esign/shared/apperr"
)

// Service limits the store checks before sending, so that an oversized value is a clear
// KindTooLarge error here rather than a service 400 that would surface as a 500.
const (
	MaxPropertyBytes = 64 << 10 // a string (UTF-16) or binary property
	MaxEntityBytes   = 1 << 20  // the whole entity, by the service's size formula
	MaxProperties    = 252      // custom properties per entity
	MaxKeyBytes      = 1 << 10  // PartitionKey and RowKey, UTF-16
	maxNameLength    = 255      // property name, characters
	// MaxBatchOps is the most operations one entity-group transaction holds.
	MaxBatchOps = 100
	// maxBatchBytes is the service's limit on a whole transaction payload.
	maxBatchBytes = 4 << 20
)

// Codes of the size errors (KindTooLarge) and key errors (KindInvalid).
const (
	CodePropertyTooLarge = "property_too_large"
	CodeEntityTooLarge   = "entity_too_large"
	CodeInvalidKey       = "invalid_entity_key"
)

func tooLarge(code, format string, args ...any) error {
	return apperr.New(apperr.KindTooLarge, code, format, args...)
}

func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r) // ranging a string never yields a surrogate: always 1 or 2
	}
	return n
}

func checkString(name, v string) error {
	if n := utf16Len(v) * 2; n > MaxPropertyBytes {
		return tooLarge(CodePropertyTooLarge, "property %s is %d bytes as UTF-16; the limit is %d (32K characters)", name, n, MaxPropertyBytes)
	}
	return nil
}

func checkBinary(name string, v []byte) error {
	if len(v) > MaxPropertyBytes {
		return tooLarge(CodePropertyTooLarge, "property %s is %d bytes; the limit is %d", name, len(v), MaxPropertyBytes)
	}
	return nil
}

// checkKey applies the key rules: at most 1 KiB, none of / \ # ? or control characters.
// Keys may come from requests, so this is KindInvalid; the key itself is not echoed.
func checkKey(field, k string) error {
	if utf16Len(k)*2 > MaxKeyBytes {
		return apperr.Invalid(CodeInvalidKey, apperr.Field(field, "must be at most 1 KiB"))
	}
	for _, r := range k {
		if r == '/' || r == '\\' || r == '#' || r == '?' || r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			return apperr.Invalid(CodeInvalidKey, apperr.Field(field, "must not contain / \\ # ? or control characters"))
		}
	}
	return nil
}

// checkPropertyName refuses names the service rejects or reserves. A bad name is a programming
// mistake, so it is a plain (internal) error.
func checkPropertyName(name string) error {
	switch {
	case name == "" || len(name) > maxNameLength:
		return fmt.Errorf("tablestore: property name %q must be 1-%d characters", name, maxNameLength)
	case name == "PartitionKey" || name == "RowKey" || name == "Timestamp" || name == "ETag":
		return fmt.Errorf("tablestore: property name %q is reserved; use the Entity field", name)
	case strings.Contains(name, "@") || strings.HasPrefix(name, "odata."):
		return fmt.Errorf("tablestore: property name %q is reserved for annotations", name)
	}
	for i, r := range name {
		letter := r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
		if !letter && (i == 0 || r < '0' || r > '9') {
			return fmt.Errorf("tablestore: property name %q must be an identifier (letters, digits, '_')", name)
		}
	}
	return nil
}

// entityOverhead is the fixed part of the service's entity size formula.
func entityOverhead(pk, rk string) int { return 4 + utf16Len(pk)*2 + utf16Len(rk)*2 }
