package i18n

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The repository's root, from this package's directory.
const root = "../.."

// proseLike is a literal a person would read: a capitalised word (alone or starting a phrase),
// three words, or words ending a sentence. Lower-case pairs (class names, "end view-only")
// and keys ("sign.submit") are not.
var proseLike = regexp.MustCompile(`^\s*\p{Lu}\p{Ll}+(\s|$)|^\s*\p{Lu}\p{Ll}{2,}\s*$|\p{L}{2,}\s+\p{L}+\s+\p{L}{2,}|\p{L}\s+\p{L}+[.!?:]\s*$`)

// notProse are the literals that match proseLike but are not text (fonts, headers).
var notProse = []string{`"Brush Script MT"`, "Content-Type", "Bearer "}

func prose(lit string) bool {
	if strings.HasPrefix(lit, "#") || strings.HasPrefix(lit, ".") { // CSS selectors
		return false
	}
	for _, n := range notProse {
		if strings.Contains(lit, n) {
			return false
		}
	}
	return proseLike.MatchString(lit)
}

// TestNoSignerFacingTextInCode fails on a text literal in a portal page's script or shell, or in
// the Go code of an e-mail to a signer, a recipient or a workflow participant: those texts come
// from the catalogues.
func TestNoSignerFacingTextInCode(t *testing.T) {
	t.Parallel()
	static := filepath.Join(root, "portal/server/static")
	scripts, err := filepath.Glob(filepath.Join(static, "*.js"))
	if err != nil || len(scripts) < 5 {
		t.Fatalf("portal scripts: %v %v", scripts, err)
	}
	for _, f := range scripts {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, lit := range jsLiterals(string(src)) {
			if prose(lit) {
				t.Errorf("%s: text in code: %q", filepath.Base(f), lit)
			}
		}
	}
	shell, err := os.ReadFile(filepath.Join(root, "portal/server/page.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range htmlTexts(string(shell)) {
		if prose(s) || strings.TrimSpace(s) != "" && regexp.MustCompile(`\p{L}{2,}`).MatchString(s) {
			t.Errorf("page.html: text outside the catalogue: %q", s)
		}
	}
	for _, f := range emailSources {
		for _, lit := range goLiterals(t, filepath.Join(root, f)) {
			if prose(lit) {
				t.Errorf("%s: text in code: %q", f, lit)
			}
		}
	}
}

// emailSources are the Go files that compose the e-mails (and the code SMS) to signers,
// recipients and workflow participants.
var emailSources = []string{"shared/notify/templates.go", "shared/notify/localized.go", "shared/otp/otpflow/message.go"}

// TestScannerFindsText is the scanner failing on what it must find.
func TestScannerFindsText(t *testing.T) {
	t.Parallel()
	js := "// a comment with words\nconst a = el(\"p\", {}, \"Sign the document\"), b = `Page ${n} of ${m}`, c = 'Close', d = \"#fields input\";" +
		"\nconst r = /[\"<>]/.test(x) ? 1 / 2 : \"Read the text\";"
	var found []string
	for _, l := range jsLiterals(js) {
		if prose(l) {
			found = append(found, l)
		}
	}
	if strings.Join(found, "|") != "Sign the document|Page  of |Close|Read the text" {
		t.Errorf("found %q", found)
	}
	html := `<p title="A title">{{.X}}</p><a href="{{.Base}}/x">Skip to content</a><span aria-label="{{index .T "k"}}"></span>`
	if got := htmlTexts(html); strings.Join(got, "|") != "A title|Skip to content" {
		t.Errorf("html texts %q", got)
	}
}

// jsLiterals are the string and template literals of src (template substitutions removed),
// comments skipped.
func jsLiterals(src string) []string {
	var out []string
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return out
			}
			i += end + 3
		case c == '/' && regexAllowed(src[:i]):
			for inClass, j := false, i+1; j < len(src) && src[j] != '\n'; j++ { // a regular expression literal
				switch {
				case src[j] == '\\':
					j++
				case src[j] == '[':
					inClass = true
				case src[j] == ']':
					inClass = false
				case src[j] == '/' && !inClass:
					i = j
					j = len(src)
				}
			}
		case c == '"' || c == '\'' || c == '`':
			var b strings.Builder
			depth := 0
			for i++; i < len(src) && (src[i] != c || depth > 0); i++ {
				switch {
				case src[i] == '\\':
					i++
				case c == '`' && depth == 0 && strings.HasPrefix(src[i:], "${"):
					depth = 1
					i++
				case depth > 0 && src[i] == '{':
					depth++
				case depth > 0 && src[i] == '}':
					depth--
				case depth == 0:
					b.WriteByte(src[i])
				}
			}
			out = append(out, b.String())
		}
	}
	return out
}

// regexAllowed reports whether a / after before starts a regular expression literal rather than
// a division: it follows an operator or an opening bracket, not a value.
func regexAllowed(before string) bool {
	b := strings.TrimRight(before, " \t\n")
	return b == "" || strings.ContainsAny(b[len(b)-1:], "(,=:[!&|?{};+-*%<>~^") || strings.HasSuffix(b, "return")
}

var (
	tmplAction = regexp.MustCompile(`\{\{.*?\}\}`)
	tag        = regexp.MustCompile(`(?s)<[^>]*>`)
	textAttr   = regexp.MustCompile(`\b(?:title|alt|aria-label|placeholder)="([^"]*)"`)
	entity     = regexp.MustCompile(`&[#a-zA-Z0-9]+;`)
)

// htmlTexts are the text nodes and human-read attributes of a page template, template actions
// removed.
func htmlTexts(src string) []string {
	var out []string
	body := tmplAction.ReplaceAllString(src, "")
	for _, m := range textAttr.FindAllStringSubmatch(body, -1) {
		if s := strings.TrimSpace(m[1]); s != "" {
			out = append(out, s)
		}
	}
	body = regexp.MustCompile(`(?is)<script.*?</script>|<title>.*?</title>|<!doctype[^>]*>`).ReplaceAllString(body, "")
	for _, s := range tag.Split(body, -1) {
		if s = strings.TrimSpace(entity.ReplaceAllString(s, "")); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// goLiterals are the string literals of a Go file, but import paths and struct tags.
func goLiterals(t *testing.T, path string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	skip := map[*ast.BasicLit]bool{}
	for _, im := range f.Imports {
		skip[im.Path] = true
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		if fld, ok := n.(*ast.Field); ok && fld.Tag != nil {
			skip[fld.Tag] = true
		}
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && !skip[lit] {
			if s, err := strconv.Unquote(lit.Value); err == nil {
				out = append(out, s)
			}
		}
		return true
	})
	return out
}
