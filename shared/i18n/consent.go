package i18n

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// ConsentStatement is one consent statement of a wording version in one language.
type ConsentStatement struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// consentVersions holds consent/<version>.json: per language, the statements in order. A
// version's texts are frozen in every language (the test pins their digests): a new wording or
// a corrected translation is a new file, a new version.
var consentVersions = map[string]map[string][]ConsentStatement{}

func loadConsent() {
	entries, err := files.ReadDir("consent")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		raw, err := files.ReadFile("consent/" + e.Name())
		if err != nil {
			panic(err)
		}
		v := map[string][]ConsentStatement{}
		if err := json.Unmarshal(raw, &v); err != nil {
			panic(fmt.Sprintf("i18n: consent %s: %v", e.Name(), err))
		}
		consentVersions[strings.TrimSuffix(path.Base(e.Name()), ".json")] = v
	}
}

// Consent is the statements of version in lang, in order, and the language they are in:
// lang's when the version has it, else English's. ok is false for an unknown version.
func Consent(version, lang string) (stmts []ConsentStatement, in string, ok bool) {
	v, ok := consentVersions[version]
	if !ok {
		return nil, "", false
	}
	in = orDefault(lang)
	if _, has := v[in]; !has {
		in = Default
	}
	return append([]ConsentStatement(nil), v[in]...), in, true
}

// ConsentVersions are the versions with a file.
func ConsentVersions() []string {
	var vs []string
	for v := range consentVersions {
		vs = append(vs, v)
	}
	return vs
}
