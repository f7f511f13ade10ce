package infra

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dispatcherapp "github.com/esign-svc/esign/dispatcher/app"
	processorapp "github.com/esign-svc/esign/processor/app"
	"github.com/esign-svc/esign/processor/dispatchjob"
	"github.com/esign-svc/esign/shared/appstatus"
	"github.com/esign-svc/esign/shared/blobpath"
	"github.com/esign-svc/esign/shared/delivery"
	"github.com/esign-svc/esign/shared/delivery/deliverystore"
	"github.com/esign-svc/esign/shared/dispatch"
	"github.com/esign-svc/esign/shared/dispatch/batchstore"
	"github.com/esign-svc/esign/shared/document"
	"github.com/esign-svc/esign/shared/document/documentstore"
	"github.com/esign-svc/esign/shared/esign"
	"github.com/esign-svc/esign/shared/template"
	"github.com/esign-svc/esign/shared/workflow/workflowstore"
)

const (
	typeAccount   = "Microsoft.Storage/storageAccounts"
	typeContainer = "Microsoft.Storage/storageAccounts/blobServices/containers"
	typeQueue     = "Microsoft.Storage/storageAccounts/queueServices/queues"
	typeTable     = "Microsoft.Storage/storageAccounts/tableServices/tables"
	typeVault     = "Microsoft.KeyVault/vaults"
	typeKey       = "Microsoft.KeyVault/vaults/keys"
	typeIdentity  = "Microsoft.ManagedIdentity/userAssignedIdentities"
)

// The tables the apps open and the containers they name (the stores' and use cases' own
// constants, so a new one the template does not create fails here).
var (
	codeTables = []string{
		dispatcherapp.TableSessions, dispatcherapp.TableIndex, processorapp.SessionsTable, processorapp.IndexTable,
		deliverystore.TableSessions, deliverystore.TableIndex, documentstore.TableDocuments,
		batchstore.TableBatches, batchstore.TableIndex, workflowstore.TableWorkflows, workflowstore.TableIndex,
		appstatus.Table,
	}
	codeContainers = []string{
		blobpath.ContainerSigned, blobpath.ContainerEvidence, delivery.ContainerDocuments, delivery.ContainerSigned,
		delivery.ContainerCopies, dispatch.ContainerDispatch, dispatch.ContainerReceipts, esign.ContainerDocuments,
		esign.ContainerTemplates, esign.ContainerSigned, document.Container, template.Container, dispatchjob.ContainerBundle,
	}
)

// An account key in a setting opens everything in its account (the processor's code among it):
// no setting may hold one, nor a connection string with one, and no storage account accepts
// shared keys. The apps run from a package URL read with their own identity.
func TestBicepNoAccountKeyInAnAppSetting(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	for _, bad := range []string{"listKeys(", "listAccountSas(", "listServiceSas(", "AccountKey=", "SharedAccessSignature=", "WEBSITE_CONTENTAZUREFILECONNECTIONSTRING"} {
		if strings.Contains(src, bad) {
			t.Errorf("main.bicep contains %q: an account key (or a setting made of one) reaches an app", bad)
		}
	}
	res := resources(src)
	for _, acct := range ofType(res, typeAccount) {
		if !strings.Contains(acct.body, "allowSharedKeyAccess: false") {
			t.Errorf("storage account %s accepts shared keys (allowSharedKeyAccess is not false)", acct.symbol)
		}
	}
	for _, a := range apps(t, src) {
		for _, s := range a.settings {
			if s.name == "AzureWebJobsStorage" || strings.HasSuffix(s.name, "CONNECTION_STRING") && s.name != "APPLICATIONINSIGHTS_CONNECTION_STRING" {
				t.Errorf("%s: setting %s is a storage connection string; use identity-based settings", a.name, s.name)
			}
		}
		pkg := a.settingsByName["WEBSITE_RUN_FROM_PACKAGE"]
		// make package writes dist/<app>.zip; the deployment uploads it as package/<app>.zip.
		if a.hostAccount == "" || pkg != "'${"+a.hostAccount+".properties.primaryEndpoints.blob}package/"+a.name+".zip'" {
			t.Errorf("%s: WEBSITE_RUN_FROM_PACKAGE is %q, not the blob package/%s.zip of its own host account", a.name, pkg, a.name)
		}
		if mi := a.settingsByName["WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID"]; mi != a.identity+".id" {
			t.Errorf("%s: WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID is %q, not its own identity's id", a.name, mi)
		}
	}
}

// One identity per app: the dispatcher (internet-facing) must not hold what the processor holds.
// Every setting that names an identity names the app's own.
func TestBicepAppsHaveTheirOwnIdentities(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	res := resources(src)
	all := apps(t, src)
	d, p := all["dispatcher"], all["processor"]
	if d.identity == "" || p.identity == "" || d.identity == p.identity {
		t.Fatalf("the apps run as %q and %q: each needs its own user-assigned identity", d.identity, p.identity)
	}
	for _, a := range all {
		if res[a.identity].typ != typeIdentity {
			t.Errorf("%s runs as %s, which is not a %s", a.name, a.identity, typeIdentity)
		}
		site := res[a.site].body
		if !strings.Contains(site, "keyVaultReferenceIdentity: "+a.identity+".id") {
			t.Errorf("%s: keyVaultReferenceIdentity is not its own identity %s", a.name, a.identity)
		}
		for _, name := range []string{"AzureWebJobsStorage__clientId", "STORAGE_CLIENT_ID", "GRAPH_IDENTITY_CLIENT_ID", "ACS_CLIENT_ID"} {
			if v, ok := a.settingsByName[name]; !ok || v != a.identity+".properties.clientId" {
				t.Errorf("%s: %s is %q, not its own identity's client id", a.name, name, v)
			}
		}
		if len(a.vaults) == 0 {
			t.Errorf("%s references no vault", a.name)
		}
	}
	for _, v := range d.vaults {
		if slices.Contains(p.vaults, v) {
			t.Errorf("both apps read secrets from vault %s: each reads only its own vault", v)
		}
	}
	for _, s := range d.settings {
		if s.name == "WEBHOOK_SECRETS" || strings.HasPrefix(s.name, "SEAL_") {
			t.Errorf("the dispatcher is given %s: only the processor signs callbacks and seals", s.name)
		}
	}
}

// Every role assignment is scoped as DESIGN 16 says: the apps' data roles on the containers,
// queues and tables themselves (account-wide only Storage Blob Delegator on the data account and
// the host's roles on the app's own host account), secrets in the app's own vault, the seal key
// to the processor alone, on the key.
func TestBicepRoleAssignmentsAreScoped(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	res := resources(src)
	all := apps(t, src)
	roleIDs := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+): '([0-9a-f-]{36})'`).FindAllStringSubmatch(varText(src, "roles"), -1) {
		roleIDs[m[1]] = m[2]
	}
	for name, id := range roleIDs {
		if want, ok := builtinRoles[name]; !ok || want != id {
			t.Errorf("var roles: %s is %s; the template may use only these built-in roles, by their ids: %v", name, id, builtinRoles)
		}
	}
	dataAccount := strings.TrimSuffix(all["dispatcher"].settingsByName["STORAGE_ACCOUNT_NAME"], ".name")
	ownerOf := map[string]app{}
	for _, a := range all {
		key := a.identity + ".properties.principalId"
		if other, shared := ownerOf[key]; shared {
			a.name = other.name + " and " + a.name // one identity for both: what one may, both may
		}
		ownerOf[key] = a
	}
	for _, ra := range roleAssignments(t, src) {
		if ra.scope == "" {
			t.Errorf("%s: no scope (the whole resource group)", ra.symbol)
			continue
		}
		if _, ok := roleIDs[ra.role]; !ok {
			t.Errorf("%s: role %q is not one of var roles", ra.symbol, ra.role)
			continue
		}
		a, isApp := ownerOf[ra.principal]
		if !isApp {
			// The operator: sets secrets, imports the seal certificate, uploads the packages.
			if !regexp.MustCompile(`^\w+ObjectId$`).MatchString(ra.principal) {
				t.Errorf("%s: principal %s is neither an app's own identity nor an operator parameter", ra.symbol, ra.principal)
			}
			switch {
			case (ra.role == "keyVaultSecretsOfficer" || ra.role == "keyVaultCertificatesOfficer") && ra.scopeType == typeVault:
			case ra.role == "blobDataContributor" && ra.scopeType == typeContainer && ra.scope != "containers":
			default:
				t.Errorf("%s: the operator's %s on %s (%s) is not one the deployment needs", ra.symbol, ra.role, ra.scope, ra.scopeType)
			}
			continue
		}
		ok := false
		switch ra.role {
		case "blobDataReader", "blobDataContributor":
			ok = ra.scopeType == typeContainer && ra.scope == "containers"
		case "queueDataContributor":
			ok = ra.scopeType == typeQueue
		case "tableDataContributor":
			ok = ra.scopeType == typeTable || ra.scope == a.hostAccount && ra.scope != dataAccount
		case "blobDataOwner":
			// The Functions host's own storage, in the app's own account; never its package.
			ok = ra.scope == a.hostAccount && ra.scope != dataAccount && ra.scopeType == typeAccount
			if ok && !strings.Contains(ra.condition, `containers:name] StringNotEquals \'package\'`) {
				t.Errorf("%s: %s may write its own package (no condition excluding the package container)", ra.symbol, a.name)
			}
		case "blobDelegator":
			ok = ra.scope == dataAccount && a.name == "dispatcher"
		case "keyVaultSecretsUser":
			ok = ra.scopeType == typeVault && slices.Contains(a.vaults, ra.scope)
		case "keyVaultCertificateUser":
			ok = ra.scopeType == typeVault && slices.Contains(a.vaults, ra.scope) && a.name == "processor"
		case "keyVaultCryptoUser":
			ok = ra.scopeType == typeKey && a.name == "processor"
		}
		if !ok {
			t.Errorf("%s: %s holds %s on %s (%s): not scoped as DESIGN 16 says", ra.symbol, a.name, ra.role, ra.scope, ra.scopeType)
		}
	}
	// The seal key: only the processor may sign with it, on the key alone.
	signers := 0
	for _, ra := range roleAssignments(t, src) {
		if ra.role == "keyVaultCryptoUser" {
			signers++
		}
	}
	if signers != 1 {
		t.Errorf("%d role assignments use Key Vault Crypto User; want one, the processor's on the seal key", signers)
	}
	if !regexp.MustCompile(`(?m)^\s+name: (split\(sealKeyVaultKeyId|sealKeyName)`).MatchString(res["sealKey"].body) {
		t.Errorf("the seal key resource is not the key SEAL_KEY_VAULT_KEY_ID names")
	}
}

// Each app holds a data role on every table, queue and container it uses, scoped there; the
// dispatcher cannot write what the seal jobs write.
func TestBicepDataRolesCoverWhatEachAppUses(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	all := apps(t, src)
	covered := map[string]map[string]map[string]bool{} // app -> scope type -> names
	writes := map[string]map[string]bool{}             // app -> containers it may write
	for _, a := range all {
		covered[a.name] = map[string]map[string]bool{typeTable: {}, typeQueue: {}, typeContainer: {}}
		writes[a.name] = map[string]bool{}
	}
	byPrincipal := map[string]string{}
	for _, a := range all {
		byPrincipal[a.identity+".properties.principalId"] = a.name
	}
	for _, ra := range roleAssignments(t, src) {
		name, ok := byPrincipal[ra.principal]
		if !ok || covered[name][ra.scopeType] == nil {
			continue
		}
		for _, n := range ra.covers {
			covered[name][ra.scopeType][n] = true
			if ra.scopeType == typeContainer && ra.role != "blobDataReader" {
				writes[name][n] = true
			}
		}
	}
	for _, a := range all {
		for _, table := range slices.Compact(slices.Sorted(slices.Values(codeTables))) {
			if !covered[a.name][typeTable][table] {
				t.Errorf("%s opens table %s at start but holds no role on it", a.name, table)
			}
		}
		for _, q := range functionQueues(t, a.name) {
			if !covered[a.name][typeQueue][q] {
				t.Errorf("%s's functions bind to queue %s but it holds no role on it", a.name, q)
			}
		}
	}
	for _, c := range slices.Compact(slices.Sorted(slices.Values(codeContainers))) {
		if !covered["dispatcher"][typeContainer][c] && !covered["processor"][typeContainer][c] {
			t.Errorf("no app holds a role on container %s, which the code names", c)
		}
	}
	for _, c := range []string{blobpath.ContainerSigned, blobpath.ContainerEvidence} {
		if writes["dispatcher"][c] {
			t.Errorf("the dispatcher may write %s: only the seal jobs (processor) write sealed outputs and evidence", c)
		}
		if !writes["processor"][c] {
			t.Errorf("the processor may not write %s, where its seal jobs write", c)
		}
	}
}

// functionQueues are the queues app's function.json files bind to (triggers and outputs).
func functionQueues(t *testing.T, app string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", app, "functions", "*", "function.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no function.json files (%v)", app, err)
	}
	var out []string
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var fn struct {
			Bindings []struct {
				QueueName string `json:"queueName"`
			} `json:"bindings"`
		}
		if err := json.Unmarshal(raw, &fn); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, b := range fn.Bindings {
			if b.QueueName != "" && !slices.Contains(out, b.QueueName) {
				out = append(out, b.QueueName)
			}
		}
	}
	return out
}

// The template creates every table and container the code names: one the apps created at first
// use would be outside the template's roles (scoped to the ones it creates) and settings.
func TestBicepCreatesEveryTableAndContainerTheCodeNames(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	tables := created(t, src, typeTable)
	for _, name := range codeTables {
		if !tables[name] {
			t.Errorf("the apps open table %q: main.bicep does not create it", name)
		}
	}
	containers := created(t, src, typeContainer)
	for _, name := range codeContainers {
		if !containers[name] {
			t.Errorf("the code names container %q: main.bicep does not create it", name)
		}
	}
}

// signed and evidence keep every version immutable for the retention the parameter sets
// (version-level WORM, versioning on); the lifecycle rules do not touch them and still delete
// the delivery copies.
func TestBicepEvidenceIsImmutable(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	res := resources(src)
	var containers resource
	for _, r := range ofType(res, typeContainer) {
		if names, _ := loopList(src, r); slices.Contains(names, blobpath.ContainerSigned) {
			containers = r
		}
	}
	if containers.symbol == "" {
		t.Fatal("main.bicep creates no container signed")
	}
	m := regexp.MustCompile(`immutableStorageWithVersioning: \{ enabled: contains\((\w+), name\) \}`).FindStringSubmatch(containers.body)
	if m == nil {
		t.Fatalf("containers %s: no version-level immutability (immutableStorageWithVersioning)", containers.symbol)
	}
	worm := quoted(varText(src, m[1]))
	for _, c := range []string{blobpath.ContainerSigned, blobpath.ContainerEvidence} {
		if !slices.Contains(worm, c) {
			t.Errorf("%s is not among the version-level immutable containers %v", c, worm)
		}
	}
	policies := ofType(res, "Microsoft.Storage/storageAccounts/blobServices/containers/immutabilityPolicies")
	if len(policies) != 1 {
		t.Fatalf("%d container immutability policies; want one, the time-based retention of the WORM containers", len(policies))
	}
	p := regexp.MustCompile(`immutabilityPeriodSinceCreationInDays: (\w+)`).FindStringSubmatch(policies[0].body)
	if p == nil || !regexp.MustCompile(`(?m)^param `+p[1]+` int`).MatchString(src) {
		t.Errorf("the retention period is not an int parameter (%v)", p)
	}
	if !strings.Contains(policies[0].body, "contains("+m[1]+", name)") || !strings.Contains(policies[0].body, "parent: "+containers.symbol+"[") {
		t.Errorf("the retention policy is not on the WORM containers")
	}
	var blobService resource
	for _, r := range ofType(res, "Microsoft.Storage/storageAccounts/blobServices") {
		if strings.Contains(containers.body, "parent: "+r.symbol+"\n") {
			blobService = r
		}
	}
	for _, want := range []string{"isVersioningEnabled: true", "deleteRetentionPolicy: { enabled: true"} {
		if !strings.Contains(blobService.body, want) {
			t.Errorf("blob service %q lacks %s", blobService.symbol, want)
		}
	}
	lifecycle := ofType(res, "Microsoft.Storage/storageAccounts/managementPolicies")
	if len(lifecycle) != 1 {
		t.Fatalf("%d lifecycle policies; want one", len(lifecycle))
	}
	if !regexp.MustCompile(`prefixMatch: \[ '` + delivery.ContainerCopies + `/' \][^\n]*\n\s*actions: \{\s*baseBlob: \{ delete: \{ daysAfterModificationGreaterThan: 31 `).MatchString(lifecycle[0].body) {
		t.Errorf("the lifecycle rule deleting the delivery copies after 31 days is gone")
	}
	for _, prefix := range regexp.MustCompile(`prefixMatch: \[([^\]]*)\]`).FindAllStringSubmatch(lifecycle[0].body, -1) {
		for _, p := range quoted(prefix[1]) {
			for _, c := range worm {
				if strings.HasPrefix(p, c+"/") {
					t.Errorf("a lifecycle rule matches %q in the WORM container %s", p, c)
				}
			}
		}
	}
}

// SCM and FTP basic authentication off, HTTPS only, TLS 1.2, no FTP; with privateNetworking
// every storage account and vault is reached through private endpoints only, and the apps
// integrate with the network.
func TestBicepPlatformAndPrivateNetworking(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	res := resources(src)
	policies := ofType(res, "Microsoft.Web/sites/basicPublishingCredentialsPolicies")
	for _, a := range apps(t, src) {
		site := res[a.site].body
		for _, want := range []string{"httpsOnly: true", "minTlsVersion: '1.2'", "ftpsState: 'Disabled'", "virtualNetworkSubnetId: privateNetworking ? "} {
			if !strings.Contains(site, want) {
				t.Errorf("%s lacks %s", a.name, want)
			}
		}
		for _, kind := range []string{"scm", "ftp"} {
			off := false
			for _, p := range policies {
				if strings.Contains(p.body, "parent: "+a.site+"\n") && strings.Contains(p.body, "name: '"+kind+"'") && strings.Contains(p.body, "allow: false") {
					off = true
				}
			}
			if !off {
				t.Errorf("%s: %s basic authentication is not turned off (basicPublishingCredentialsPolicies %s allow: false)", a.name, kind, kind)
			}
		}
	}
	if !regexp.MustCompile(`(?m)^param privateNetworking bool`).MatchString(src) {
		t.Fatal("main.bicep has no bool parameter privateNetworking")
	}
	publicAccess := regexp.MustCompile(`publicNetworkAccess: (privateNetworking \? 'Disabled' : 'Enabled'|\w+)`)
	var endpointTargets []string
	if eps := varText(src, "endpoints"); eps != "" {
		for _, m := range regexp.MustCompile(`id: (\w+)\.id, group: '(\w+)'`).FindAllStringSubmatch(eps, -1) {
			endpointTargets = append(endpointTargets, m[1]+"/"+m[2])
		}
	}
	for _, typ := range []string{typeAccount, typeVault} {
		for _, r := range ofType(res, typ) {
			m := publicAccess.FindStringSubmatch(r.body)
			if m == nil || m[1] != "privateNetworking ? 'Disabled' : 'Enabled'" && !strings.Contains(varText(src, m[1]), "privateNetworking ? 'Disabled' : 'Enabled'") {
				t.Errorf("%s: public network access does not follow privateNetworking", r.symbol)
			}
			groups := []string{"vault"}
			if typ == typeAccount {
				groups = []string{"blob", "table"}
			}
			for _, g := range groups {
				if !slices.Contains(endpointTargets, r.symbol+"/"+g) {
					t.Errorf("%s has no private endpoint for %s", r.symbol, g)
				}
			}
		}
	}
	pe := ofType(res, "Microsoft.Network/privateEndpoints")
	if len(pe) != 1 || !strings.Contains(pe[0].body, "[for ep in endpoints: if (privateNetworking)") {
		t.Errorf("the private endpoints are not made, one per entry of var endpoints, when privateNetworking")
	}
	if dataAccount := strings.TrimSuffix(apps(t, src)["processor"].settingsByName["STORAGE_ACCOUNT_NAME"], ".name"); !slices.Contains(endpointTargets, dataAccount+"/queue") {
		t.Errorf("the data account has no private endpoint for its queues (the processor's triggers)")
	}
}

// The seal key is a Key Vault key the processor signs with (SEAL_KEY_VAULT_KEY_ID), never a file
// on a share an account key opens.
func TestBicepSealKeyIsTheVaultKey(t *testing.T) {
	t.Parallel()
	src := readTemplate(t)
	all := apps(t, src)
	for _, a := range all {
		for _, s := range a.settings {
			if strings.HasPrefix(s.name, "SEAL_PKCS12") || s.name == "SEAL_KEY_FILE" || s.name == "SEAL_CERT_FILE" {
				t.Errorf("%s: %s: the seal key is a file", a.name, s.name)
			}
		}
	}
	if v := all["processor"].settingsByName[sealKeyVaultSetting]; v != "sealKeyVaultKeyId" || !regexp.MustCompile(`(?m)^param sealKeyVaultKeyId string`).MatchString(src) {
		t.Errorf("the processor's %s is %q, not the parameter sealKeyVaultKeyId", sealKeyVaultSetting, v)
	}
	if _, ok := all["dispatcher"].settingsByName[sealKeyVaultSetting]; ok {
		t.Errorf("the dispatcher is given %s", sealKeyVaultSetting)
	}
}
