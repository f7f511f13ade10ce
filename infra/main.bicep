// Deploys the e-signature service into the customer's subscription: the data storage account
// (blobs, tables, queues; managed identity only, shared keys off), a second small account for the
// Functions runtime's content share (Azure Files, which the runtime reaches only with an account
// key; it holds the apps' code and nothing of the service's data), a Key Vault holding the secrets, a user-assigned managed identity with data
// roles on the storage account and secret read access, Application Insights, and two Linux
// Function Apps running the Go custom handlers (dispatcher: HTTP; processor: queues and timers).
// Deploy the code with `make package` and a zip deployment of dist/dispatcher.zip and
// dist/processor.zip to the two apps.

targetScope = 'resourceGroup'

@description('Short name used in resource names (3-11 lowercase letters and digits).')
@minLength(3)
@maxLength(11)
param prefix string

param location string = resourceGroup().location

@description('The signing portal base URL (https).')
param portalUrl string

@description('The signing portal API base URL (https); the processor POSTs {portalApiUrl}/v1/purge after each seal.')
param portalApiUrl string

@description('Batch dispatch: the approvers e-mailed a batch waiting for approval when the batch names none (comma-separated addresses; empty: such a batch notifies nobody).')
param dispatchApprovers string = ''

@description('Entra ID issuer of the callers\' JWTs, e.g. https://login.microsoftonline.com/<tenant>/v2.0')
param authIssuer string

@description('Audience (application ID URI) of this API.')
param authAudience string

@description('JWKS URL of the issuer, e.g. https://login.microsoftonline.com/<tenant>/discovery/v2.0/keys')
param authJwksUrl string

@description('The operator\'s Ed25519 licence public key (base64).')
param licencePublicKey string

@description('The operator\'s licensing service (https; LICENSING_URL): asked at session, delivery, batch and workflow create, told the metered usage, shown in /api/health. Empty: the offline licence alone.')
param licensingUrl string = ''

@description('E-mail provider: operator, customer-acs or smtp (the outbox is for local development only).')
@allowed(['operator', 'customer-acs', 'smtp'])
param emailProvider string = 'customer-acs'

@description('SMS provider for OTP codes.')
@allowed(['customer-acs'])
param smsProvider string = 'customer-acs'

@description('emailProvider operator: the operator\'s notification service URL (https). Its HMAC key goes into the vault as notification-service-key.')
param notificationServiceUrl string = ''

@description('customer-acs (SMS always, e-mail when chosen): the Communication Services endpoint, e.g. https://<name>.communication.azure.com. The identity signs in; grant it access to the resource.')
param acsEndpoint string = ''

@description('customer-acs e-mail: the verified sender address.')
param acsEmailSender string = ''

@description('customer-acs SMS: the sending phone number (E.164).')
param acsSmsFrom string = ''

@description('emailProvider smtp: the relay (STARTTLS required). The password goes into the vault as smtp-password.')
param smtpHost string = ''
param smtpPort string = '587'
param smtpUsername string = ''
param smtpFrom string = ''

@description('Object id of the principal allowed to set the Key Vault secrets after deployment.')
param secretsAdminObjectId string

@description('Proxies in front of the dispatcher that append to X-Forwarded-For: 1 is the Functions front end; add one for each gateway (Front Door, Application Gateway) placed in front of it.')
@minValue(0)
@maxValue(10)
param trustedProxyHops int = 1

@description('Whether the submitter of a dispatch batch may also decide it (approve, reject, request changes); by default another approver of the tenant must.')
param dispatchAllowSelfApproval bool = false

@description('Elastic Premium keeps the handlers warm; Y1 (consumption) is cheaper and colder.')
@allowed(['EP1', 'EP2', 'Y1'])
param planSku string = 'EP1'

var suffix = uniqueString(resourceGroup().id, prefix)
var storageName = toLower('${prefix}st${take(suffix, 10)}')
var runtimeStorageName = toLower('${prefix}fn${take(suffix, 10)}')
var vaultName = '${prefix}-kv-${take(suffix, 8)}'

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: '${prefix}-id'
  location: location
}

resource storage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: storageName
  location: location
  sku: { name: 'Standard_ZRS' }
  kind: 'StorageV2'
  properties: {
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false // managed identity only; SAS are user delegation SAS
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
  }
}

// The Functions runtime's own account, for the content share only. Elastic Premium and
// Consumption plans keep an app's code in an Azure Files share that the runtime mounts with the
// account key (WEBSITE_CONTENTAZUREFILECONNECTIONSTRING; Azure Files content shares cannot use a
// managed identity), so this account keeps shared keys on. No data of the service is written
// here: the apps' storage settings and the host's AzureWebJobsStorage name the data account.
resource runtimeStorage 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: runtimeStorageName
  location: location
  sku: { name: 'Standard_LRS' }
  kind: 'StorageV2'
  properties: {
    allowBlobPublicAccess: false
    allowSharedKeyAccess: true // the content share is reached with the key (see above)
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
  }
}

var contentShareConnection = 'DefaultEndpointsProtocol=https;AccountName=${runtimeStorage.name};EndpointSuffix=${environment().suffixes.storage};AccountKey=${runtimeStorage.listKeys().keys[0].value}'

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: storage
  name: 'default'
  properties: { deleteRetentionPolicy: { enabled: true, days: 30 } }
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [for name in ['documents', 'templates', 'signed', 'evidence', 'deliveries', 'dispatch', 'receipts', 'bundles']: {
  parent: blobService
  name: name
  properties: { publicAccess: 'None' }
}]

// Each delivery's download copy (deliveries/<tid>/<deliveryId>.pdf) is deleted by revoke; the rest go
// 31 days after they were written (a delivery session lives at most 30 days, and its copy is
// written while it lives).
resource lifecycle 'Microsoft.Storage/storageAccounts/managementPolicies@2023-05-01' = {
  parent: storage
  name: 'default'
  properties: {
    policy: {
      rules: [
        {
          name: 'delivery-copies'
          enabled: true
          type: 'Lifecycle'
          definition: {
            filters: { blobTypes: [ 'blockBlob' ], prefixMatch: [ 'deliveries/' ] }
            actions: { baseBlob: { delete: { daysAfterModificationGreaterThan: 31 } } }
          }
        }
      ]
    }
  }
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [for name in ['seal', 'seal-poison', 'notifications', 'notifications-poison', 'deliveryupload', 'deliveryupload-poison', 'deliveryinvite', 'deliveryinvite-poison', 'portalpurge', 'portalpurge-poison', 'signeddelivery', 'signeddelivery-poison', 'dispatch', 'dispatch-poison', 'dispatch-record', 'dispatch-record-poison', 'dispatch-finish', 'dispatch-finish-poison', 'dispatch-notify', 'dispatch-notify-poison', 'workflow-notify', 'workflow-notify-poison', 'workflow-seal', 'workflow-seal-poison', 'workflow-callback', 'workflow-callback-poison', 'workflow-trigger', 'workflow-trigger-poison', 'licence-usage', 'licence-usage-poison']: {
  parent: queueService
  name: name
}]

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

resource tables 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = [for name in ['esignsessions', 'esignindex', 'deliveries', 'deliveryindex']: {
  parent: tableService
  name: name
}]

// Data roles for the identity: blobs (and delegation keys for user delegation SAS), queues,
// tables. Built-in role definition ids.
var roles = {
  blobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  blobDelegator: 'db58b8e5-c6ad-4a2a-8342-4190687cbf4a'
  queueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  tableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
}

resource storageRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for role in [roles.blobDataOwner, roles.blobDelegator, roles.queueDataContributor, roles.tableDataContributor]: {
  name: guid(storage.id, identity.id, role)
  scope: storage
  properties: {
    principalId: identity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', role)
  }
}]

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: vaultName
  location: location
  properties: {
    tenantId: subscription().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    enablePurgeProtection: true
  }
}

resource vaultReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, identity.id, roles.keyVaultSecretsUser)
  scope: vault
  properties: {
    principalId: identity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
  }
}

resource vaultAdmin 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, secretsAdminObjectId, roles.keyVaultSecretsOfficer)
  scope: vault
  properties: {
    principalId: secretsAdminObjectId
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
  }
}

// Secrets are set after deployment (see infra/README.md); the apps reference them by name.
var secretNames = ['token-keys', 'pii-hash-key', 'pii-enc-keys', 'portal-callback-secrets', 'licence', 'seal-pkcs12', 'seal-pkcs12-password', 'notification-service-key', 'smtp-password', 'webhook-secrets']
var kvRef = reduce(secretNames, {}, (acc, name) => union(acc, { '${name}': '@Microsoft.KeyVault(VaultName=${vault.name};SecretName=${name})' }))

resource insights 'Microsoft.Insights/components@2020-02-02' = {
  name: '${prefix}-ai'
  location: location
  kind: 'web'
  properties: { Application_Type: 'web' }
}

resource plan 'Microsoft.Web/serverfarms@2023-12-01' = {
  name: '${prefix}-plan'
  location: location
  kind: 'linux'
  sku: { name: planSku, tier: planSku == 'Y1' ? 'Dynamic' : 'ElasticPremium' }
  properties: { reserved: true }
}

var commonSettings = [
  { name: 'FUNCTIONS_EXTENSION_VERSION', value: '~4' }
  { name: 'FUNCTIONS_WORKER_RUNTIME', value: 'custom' }
  { name: 'APPLICATIONINSIGHTS_CONNECTION_STRING', value: insights.properties.ConnectionString }
  // The host's own storage, by identity (queue triggers and output bindings use it).
  { name: 'AzureWebJobsStorage__accountName', value: storage.name }
  { name: 'AzureWebJobsStorage__credential', value: 'managedidentity' }
  { name: 'AzureWebJobsStorage__clientId', value: identity.properties.clientId }
  // The handlers' storage, by identity.
  { name: 'STORAGE_ACCOUNT_NAME', value: storage.name }
  { name: 'STORAGE_CLIENT_ID', value: identity.properties.clientId }
  { name: 'TOKEN_KEYS', value: kvRef['token-keys'] }
  { name: 'PII_HASH_KEY', value: kvRef['pii-hash-key'] }
  { name: 'PII_ENC_KEYS', value: kvRef['pii-enc-keys'] }
  { name: 'PORTAL_URL', value: portalUrl }
  { name: 'EMAIL_PROVIDER', value: emailProvider }
  // Document-library uploads through Microsoft Graph with the identity (grant it Sites.Selected
  // on the customer's site; without the grant uploads fail with graph_forbidden).
  { name: 'GRAPH_USE_MANAGED_IDENTITY', value: 'true' }
  { name: 'GRAPH_IDENTITY_CLIENT_ID', value: identity.properties.clientId }
  { name: 'SMS_PROVIDER', value: smsProvider }
]

// The chosen providers' own settings (both apps send: the dispatcher OTP codes, the processor
// the rest); each app refuses to start without the ones its providers need.
var operatorSettings = emailProvider == 'operator' ? [
  { name: 'NOTIFICATION_SERVICE_URL', value: notificationServiceUrl }
  { name: 'NOTIFICATION_SERVICE_KEY', value: kvRef['notification-service-key'] }
] : []
var acsSettings = concat([
  { name: 'ACS_ENDPOINT', value: acsEndpoint }
  { name: 'ACS_CLIENT_ID', value: identity.properties.clientId }
  { name: 'ACS_SMS_FROM', value: acsSmsFrom }
], emailProvider == 'customer-acs' ? [
  { name: 'ACS_EMAIL_SENDER', value: acsEmailSender }
] : [])
var smtpSettings = emailProvider == 'smtp' ? [
  { name: 'SMTP_HOST', value: smtpHost }
  { name: 'SMTP_PORT', value: smtpPort }
  { name: 'SMTP_USERNAME', value: smtpUsername }
  { name: 'SMTP_PASSWORD', value: kvRef['smtp-password'] }
  { name: 'SMTP_FROM', value: smtpFrom }
] : []

// The content share of each app: its own share in the runtime account.
var dispatcherContent = [
  { name: 'WEBSITE_CONTENTAZUREFILECONNECTIONSTRING', value: contentShareConnection }
  { name: 'WEBSITE_CONTENTSHARE', value: '${prefix}-dispatcher' }
]
var processorContent = [
  { name: 'WEBSITE_CONTENTAZUREFILECONNECTIONSTRING', value: contentShareConnection }
  { name: 'WEBSITE_CONTENTSHARE', value: '${prefix}-processor' }
]

resource dispatcher 'Microsoft.Web/sites@2023-12-01' = {
  name: '${prefix}-dispatcher-${take(suffix, 6)}'
  location: location
  kind: 'functionapp,linux'
  identity: { type: 'UserAssigned', userAssignedIdentities: { '${identity.id}': {} } }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    keyVaultReferenceIdentity: identity.id
    siteConfig: {
      linuxFxVersion: ''
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      cors: { allowedOrigins: [] } // the app answers CORS for the portal origin itself
      appSettings: concat(commonSettings, operatorSettings, acsSettings, smtpSettings, dispatcherContent, [
        { name: 'PORTAL_CALLBACK_SECRETS', value: kvRef['portal-callback-secrets'] }
        { name: 'AUTH_ISSUER', value: authIssuer }
        { name: 'AUTH_AUDIENCE', value: authAudience }
        { name: 'AUTH_JWKS_URL', value: authJwksUrl }
        { name: 'LICENCE', value: kvRef.licence }
        { name: 'LICENCE_PUBLIC_KEY', value: licencePublicKey }
        { name: 'LICENSING_URL', value: licensingUrl }
        { name: 'TRUSTED_PROXY_HOPS', value: string(trustedProxyHops) }
        { name: 'DISPATCH_ALLOW_SELF_APPROVAL', value: string(dispatchAllowSelfApproval) }
      ])
    }
  }
  dependsOn: [storageRoles, vaultReader]
}

resource processor 'Microsoft.Web/sites@2023-12-01' = {
  name: '${prefix}-processor-${take(suffix, 6)}'
  location: location
  kind: 'functionapp,linux'
  identity: { type: 'UserAssigned', userAssignedIdentities: { '${identity.id}': {} } }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    keyVaultReferenceIdentity: identity.id
    siteConfig: {
      linuxFxVersion: ''
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      appSettings: concat(commonSettings, operatorSettings, acsSettings, smtpSettings, processorContent, [
        { name: 'SEAL_PKCS12_FILE', value: '/home/site/seal/seal.p12' }
        { name: 'SEAL_PKCS12_PASSWORD', value: kvRef['seal-pkcs12-password'] }
        // The post-seal purge at the portal, signed with the shared portal secret.
        { name: 'PORTAL_API_URL', value: portalApiUrl }
        { name: 'PORTAL_CALLBACK_SECRETS', value: kvRef['portal-callback-secrets'] }
        { name: 'DISPATCH_APPROVERS', value: dispatchApprovers }
        // The workflows' terminal callbacks, signed with the operator's webhook secrets.
        { name: 'WEBHOOK_SECRETS', value: kvRef['webhook-secrets'] }
        // The licence again: the auto-trigger and batch record jobs check it before they act.
        { name: 'LICENCE', value: kvRef.licence }
        { name: 'LICENCE_PUBLIC_KEY', value: licencePublicKey }
        // The metering job (licence-usage queue) posts usage records here.
        { name: 'LICENSING_URL', value: licensingUrl }
      ])
    }
  }
  dependsOn: [storageRoles, vaultReader]
}

output dispatcherUrl string = 'https://${dispatcher.properties.defaultHostName}/api'
output storageAccount string = storage.name
output runtimeStorageAccount string = runtimeStorage.name
output keyVault string = vault.name
output identityClientId string = identity.properties.clientId
