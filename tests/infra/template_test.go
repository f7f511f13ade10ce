package infra

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// templatePath is infra/main.bicep, or the file INFRA_BICEP names (to run these checks against
// another version of the template: `git show main:infra/main.bicep > /tmp/old.bicep;
// INFRA_BICEP=/tmp/old.bicep go test ./tests/infra`).
func templatePath() string {
	if p := os.Getenv("INFRA_BICEP"); p != "" {
		return p
	}
	return filepath.Join("..", "..", "infra", "main.bicep")
}

func readTemplate(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(templatePath())
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// resource is one `resource <symbol> '<type>@<version>' [existing] = ...` declaration of the
// template, with its text up to the closing brace at the start of a line.
type resource struct {
	symbol, typ string
	existing    bool
	body        string
}

var resourceRE = regexp.MustCompile(`(?m)^resource (\w+) '([^@']+)@[^']+'( existing)? = `)

func resources(src string) map[string]resource {
	out := map[string]resource{}
	locs := resourceRE.FindAllStringSubmatchIndex(src, -1)
	for _, l := range locs {
		rest := src[l[0]:]
		end := regexp.MustCompile(`(?m)^\}\]?\s*$`).FindStringIndex(rest)
		body := rest
		if end != nil {
			body = rest[:end[1]]
		}
		sym := src[l[2]:l[3]]
		out[sym] = resource{symbol: sym, typ: src[l[4]:l[5]], existing: l[6] >= 0, body: body}
	}
	return out
}

// ofType are the resources of one type, in symbol order.
func ofType(res map[string]resource, typ string) []resource {
	var out []resource
	for _, r := range res {
		if r.typ == typ {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b resource) int { return strings.Compare(a.symbol, b.symbol) })
	return out
}

// varText is the text of `var <name> = ...`: its first line and the lines after it up to a
// blank line or the next declaration or comment at the start of a line ("" when there is none).
func varText(src, name string) string {
	i := strings.Index(src, "\nvar "+name+" = ")
	if i < 0 {
		return ""
	}
	lines := strings.Split(src[i+1:], "\n")
	end := 1
	for ; end < len(lines); end++ {
		l := lines[end]
		if l == "" || !strings.ContainsAny(l[:1], " \t]})") {
			break
		}
	}
	return strings.Join(lines[:end], "\n")
}

// varValue is the text of var name after its '='.
func varValue(src, name string) string {
	_, v, _ := strings.Cut(varText(src, name), "=")
	return v
}

// quoted are the '...' strings of text (no interpolation).
func quoted(text string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`'([^'$]*)'`).FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}

// loopList is the list a resource loops over (`[for name in X` or `[for (name, i) in X`): the
// names of an inline list, or of the var X.
func loopList(src string, r resource) ([]string, string) {
	m := regexp.MustCompile(`\[for (?:\w+|\(\w+, \w+\)) in (\w+|\[[^\]]*\])`).FindStringSubmatch(r.body)
	if m == nil {
		return nil, ""
	}
	if strings.HasPrefix(m[1], "[") {
		return quoted(m[1]), ""
	}
	return quoted(varValue(src, m[1])), m[1]
}

// created are the names of the resources of type typ the template creates (loops and single
// declarations alike).
func created(t *testing.T, src, typ string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, r := range ofType(resources(src), typ) {
		if r.existing {
			continue
		}
		if names, _ := loopList(src, r); names != nil {
			for _, n := range names {
				out[n] = true
			}
			continue
		}
		if m := regexp.MustCompile(`(?m)^  name: '([a-z0-9-]+)'`).FindStringSubmatch(r.body); m != nil {
			out[m[1]] = true
		}
	}
	return out
}

// roleAssignment is one role assignment of the template, or one loop of them.
type roleAssignment struct {
	symbol    string
	scope     string // the symbol the scope names ("" when none: the resource group)
	scopeType string
	role      string // the key in var roles
	principal string // the expression of principalId
	condition string
	covers    []string // a loop's names it assigns on (the loop's list, filtered by its if)
}

func roleAssignments(t *testing.T, src string) []roleAssignment {
	t.Helper()
	res := resources(src)
	var out []roleAssignment
	for _, r := range ofType(res, "Microsoft.Authorization/roleAssignments") {
		ra := roleAssignment{symbol: r.symbol}
		if m := regexp.MustCompile(`(?m)^  scope: (\w+)`).FindStringSubmatch(r.body); m != nil {
			ra.scope = m[1]
			ra.scopeType = res[m[1]].typ
		}
		var loopRoles []string
		if m := regexp.MustCompile(`roleDefinitions', (?:roles\.(\w+)|(\w+))\)`).FindStringSubmatch(r.body); m != nil {
			ra.role = m[1] + m[2]
			if m[2] != "" { // a loop over roles: one assignment per role it lists
				if l := regexp.MustCompile(`\[for ` + m[2] + ` in \[([^\]]*)\]`).FindStringSubmatch(r.body); l != nil {
					for _, x := range regexp.MustCompile(`roles\.(\w+)`).FindAllStringSubmatch(l[1], -1) {
						loopRoles = append(loopRoles, x[1])
					}
				}
			}
		}
		if m := regexp.MustCompile(`principalId: (\S+)`).FindStringSubmatch(r.body); m != nil {
			ra.principal = m[1]
		}
		if m := regexp.MustCompile(`condition: (\S+)`).FindStringSubmatch(r.body); m != nil {
			ra.condition = varText(src, m[1])
			if ra.condition == "" {
				ra.condition = m[1]
			}
		}
		if names, _ := loopList(src, r); names != nil {
			ra.covers = names
			if m := regexp.MustCompile(`if \(contains\((\w+), \w+\)\)`).FindStringSubmatch(r.body); m != nil {
				filter := quoted(varValue(src, m[1]))
				ra.covers = slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !slices.Contains(filter, n) })
			}
		}
		if loopRoles == nil {
			out = append(out, ra)
		}
		for _, role := range loopRoles {
			one := ra
			one.role = role
			out = append(out, one)
		}
	}
	if len(out) == 0 {
		t.Fatal("main.bicep has no role assignments")
	}
	return out
}

// builtinRoles are the Azure built-in roles the template may use, by the key of its var roles
// and their definition ids (a wrong id would grant another role than the name says).
var builtinRoles = map[string]string{
	"blobDataOwner":               "b7e6dc6d-f1e8-4753-8033-0f276bb0955b",
	"blobDataContributor":         "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
	"blobDataReader":              "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
	"blobDelegator":               "db58b8e5-c6ad-4a2a-8342-4190687cbf4a",
	"queueDataContributor":        "974c5e8b-45b9-4653-ba55-5f855dd0fb88",
	"tableDataContributor":        "0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3",
	"keyVaultSecretsUser":         "4633458b-17de-408a-b874-0445c86b69e6",
	"keyVaultSecretsOfficer":      "b86a8fe4-44ce-4948-aee5-eccb2c155cd7",
	"keyVaultCertificateUser":     "db79e9a7-68ee-4b58-9aeb-b90e7c24fcba",
	"keyVaultCertificatesOfficer": "a4417e6f-fecd-4de8-b567-7b0420556985",
	"keyVaultCryptoUser":          "12338af0-0e69-4776-bea7-57ae8d297424",
}

// app is what the template gives one Function App: its resource, the identity it runs as, the
// storage account and vaults its settings name.
type app struct {
	name, site     string
	identity       string   // the userAssignedIdentities symbol
	hostAccount    string   // the account of AzureWebJobsStorage__blobServiceUri
	vaults         []string // the vault symbols its Key Vault references name
	settings       []setting
	settingsByName map[string]string
}

func siteIdentity(body string) string {
	m := regexp.MustCompile(`userAssignedIdentities: \{ '\$\{(\w+)\.id\}': \{\} \}`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return m[1]
}

func apps(t *testing.T, src string) map[string]app {
	t.Helper()
	res := resources(src)
	out := map[string]app{}
	for _, name := range []string{"dispatcher", "processor"} {
		site, ok := res[name]
		if !ok || site.typ != "Microsoft.Web/sites" {
			t.Fatalf("main.bicep has no Microsoft.Web/sites %s", name)
		}
		a := app{name: name, site: name, identity: siteIdentity(site.body), settingsByName: map[string]string{}}
		a.settings = appSettings(t, src, name)
		for _, s := range a.settings {
			a.settingsByName[s.name] = s.value
		}
		if m := regexp.MustCompile(`^'?\$?\{?(\w+)\.properties\.primaryEndpoints\.blob`).FindStringSubmatch(a.settingsByName["AzureWebJobsStorage__blobServiceUri"]); m != nil {
			a.hostAccount = m[1]
		}
		for _, s := range a.settings {
			if m := kvRefRE.FindStringSubmatch(s.value); m != nil {
				for _, v := range regexp.MustCompile(`VaultName=\$\{(\w+)\.name\}`).FindAllStringSubmatch(varText(src, m[1]), -1) {
					if !slices.Contains(a.vaults, v[1]) {
						a.vaults = append(a.vaults, v[1])
					}
				}
			}
		}
		out[name] = a
	}
	return out
}
