// Package i18n holds the message catalogues of everything a signer, a delivery recipient or a
// workflow participant reads (DESIGN 18): the portal's pages, the e-mails to them, the evidence
// certificate's signer-facing headings and the consent statements. A catalogue is a flat map of
// keys to texts with {name} placeholders, one embedded JSON file per language; a key missing in
// a catalogue falls back to English (the completeness test keeps that from happening).
//
// The supported languages are an explicit allow-list. Choosing one: a slot's or recipient's
// locale (Canonical at create time), else the browser's Accept-Language (Negotiate), else "en".
// Requester notices and the API's problem texts stay English.
package i18n

import (
	"embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/text/language"

	"github.com/esign-svc/esign/shared/apperr"
)

// Default is the language of everything without a locale, and the fallback of a missing key.
const Default = "en"

// Supported are the languages with a catalogue, the default first.
var Supported = []string{"en", "de", "fr", "ar"}

//go:embed catalogues/*.json consent/*.json
var files embed.FS

var (
	catalogues = map[string]map[string]string{}
	tags       []language.Tag
	matcher    language.Matcher
)

func init() {
	for _, l := range Supported {
		raw, err := files.ReadFile("catalogues/" + l + ".json")
		if err != nil {
			panic(err) // the embedded files are fixed at build time; the tests read every one
		}
		m := map[string]string{}
		if err := json.Unmarshal(raw, &m); err != nil {
			panic(fmt.Sprintf("i18n: catalogue %s: %v", l, err))
		}
		catalogues[l] = m
		tags = append(tags, language.MustParse(l))
	}
	matcher = language.NewMatcher(tags)
	loadConsent()
}

// Supports reports whether lang is one of the supported languages, exactly as Canonical writes it.
func Supports(lang string) bool {
	_, ok := catalogues[lang]
	return ok
}

// orDefault is lang when supported, else Default.
func orDefault(lang string) string {
	if Supports(lang) {
		return lang
	}
	return Default
}

// T is the text of key in lang (English when lang is not supported or lacks the key; the key
// itself when English lacks it too, so that a slip shows rather than an empty string). Each
// {name} is replaced by vars[name]; vars are values, never markup.
func T(lang, key string, vars map[string]string) string {
	s, ok := catalogues[orDefault(lang)][key]
	if !ok {
		if s, ok = catalogues[Default][key]; !ok {
			s = key
		}
	}
	if len(vars) == 0 {
		return s
	}
	pairs := make([]string, 0, 2*len(vars))
	for k, v := range vars {
		pairs = append(pairs, "{"+k+"}", v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// Catalogue is a copy of lang's entries whose keys start with one of prefixes, with English
// filling any missing key (the portal embeds its pages' part in each page).
func Catalogue(lang string, prefixes ...string) map[string]string {
	out := map[string]string{}
	for _, l := range []string{Default, orDefault(lang)} {
		for k, v := range catalogues[l] {
			for _, p := range prefixes {
				if strings.HasPrefix(k, p) {
					out[k] = v
					break
				}
			}
		}
	}
	return out
}

// Dir is the writing direction of lang: "rtl" for Arabic, else "ltr".
func Dir(lang string) string {
	if orDefault(lang) == "ar" {
		return "rtl"
	}
	return "ltr"
}

// Error codes of a locale that cannot be used.
const (
	CodeLocaleInvalid     = "locale_invalid"
	CodeLocaleUnsupported = "locale_unsupported"
)

// LocaleError says why a locale was refused: Code is CodeLocaleInvalid for a string that is
// not a BCP 47 tag, CodeLocaleUnsupported for a tag of a language without a catalogue.
type LocaleError struct {
	Code string
	Tag  string
}

func (e *LocaleError) Error() string {
	if e.Code == CodeLocaleInvalid {
		return "must be a BCP 47 language tag such as de or fr-CH"
	}
	return "the language of " + e.Tag + " is not supported; use one of " + strings.Join(Supported, ", ")
}

// wellFormed is BCP 47's alphabet: subtags of letters and digits joined by hyphens (the
// matcher would take "de_DE" too; a create body may not).
var wellFormed = regexp.MustCompile(`^[A-Za-z0-9]{1,8}(-[A-Za-z0-9]{1,8})*$`)

// Canonical checks a locale given in a create body or template settings and answers the
// supported language it selects: "" for "" (no choice made), the language for a well-formed
// tag whose language has a catalogue (de-AT -> de, FR -> fr, ar-EG -> ar), and a *LocaleError
// for a malformed tag or one of another language (ja, pt-BR): an unsupported language is
// refused rather than silently shown in English, so the caller learns at once.
func Canonical(tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	t, err := language.Parse(tag)
	if err != nil || len(tag) > 35 || !wellFormed.MatchString(tag) {
		return "", &LocaleError{Code: CodeLocaleInvalid, Tag: tag}
	}
	base, conf := t.Base()
	if conf == language.No {
		return "", &LocaleError{Code: CodeLocaleInvalid, Tag: tag}
	}
	if Supports(base.String()) {
		return base.String(), nil
	}
	return "", &LocaleError{Code: CodeLocaleUnsupported, Tag: tag}
}

// Negotiate picks the supported language for an Accept-Language header: the best match by
// BCP 47 matching with the header's weights, Default when none matches or the header is
// empty or malformed.
func Negotiate(acceptLanguage string) string {
	if strings.TrimSpace(acceptLanguage) == "" {
		return Default
	}
	prefs, _, err := language.ParseAcceptLanguage(acceptLanguage)
	if err != nil || len(prefs) == 0 {
		return Default
	}
	_, idx, conf := matcher.Match(prefs...)
	if conf == language.No {
		return Default
	}
	return Supported[idx]
}

// Choose is the language of a page or message: locale when it names a supported language
// (it was checked at create time), else the negotiated Accept-Language, else Default.
func Choose(locale, acceptLanguage string) string {
	if l, err := Canonical(locale); err == nil && l != "" {
		return l
	}
	return Negotiate(acceptLanguage)
}

// CheckLocale is the field error of a locale given at field (its full JSON path, e.g.
// "signers[0].locale"), or nil when it is empty or selects a supported language.
func CheckLocale(field, tag string) []apperr.FieldError {
	if _, err := Canonical(tag); err != nil {
		return []apperr.FieldError{apperr.Field(field, err.Error())}
	}
	return nil
}

// Normalize is the supported language tag selects ("" when none): call it after CheckLocale.
func Normalize(tag string) string {
	l, _ := Canonical(tag)
	return l
}
