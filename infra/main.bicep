// Deploys the e-signature service into the customer's subscription (DESIGN 16):
// - the data storage account (blobs, tables, queues; shared keys off, managed identity only);
//   `signed` and `evidence` are version-level WORM (time-based retention, versioning on);
// - one small storage account per app for its Functions host (leases, keys) and its code
//   package, reached with the app's identity (no content share, no account key anywhere);
// - one user-assigned identity per app, each with data roles scoped to the containers, queues
//   and tables that app uses (account-wide only: Storage Blob Delegator for the dispatcher's
//   user-delegation download links, and each host's own account);
// - one Key Vault per app holding the secrets that app reads; the processor's also holds the
//   seal certificate, whose non-exportable key only the processor's identity may use;
// - Application Insights, an Elastic Premium Linux plan and the two Function Apps running the Go
//   custom handlers from a package in blob storage (WEBSITE_RUN_FROM_PACKAGE, read by identity);
// - with privateNetworking, a virtual network: the apps' integration subnet and private
//   endpoints for every storage account and vault, whose public access is then off.
// Deploy the code with `make package` and an upload of dist/<app>.zip (infra/README.md).

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

@description('Object id of the principal allowed to set the Key Vault secrets (and import the seal certificate) after deployment.')
param secretsAdminObjectId string

@description('Object id of the principal that uploads the apps\' packages (dist/dispatcher.zip, dist/processor.zip) to the package containers; by default the secrets admin.')
param deployerObjectId string = secretsAdminObjectId

@description('Proxies in front of the dispatcher that append to X-Forwarded-For: 1 is the Functions front end; add one for each gateway (Front Door, Application Gateway) placed in front of it.')
@minValue(0)
@maxValue(10)
param trustedProxyHops int = 1

@description('Whether the submitter of a dispatch batch may also decide it (approve, reject, request changes); by default another approver of the tenant must.')
param dispatchAllowSelfApproval bool = false

@description('Elastic Premium keeps the handlers warm and runs from a package URL without a content share; the consumption plan (Y1) is not offered: it cannot integrate with a virtual network.')
@allowed(['EP1', 'EP2', 'EP3'])
param planSku string = 'EP1'

@description('The RFC 3161 time-stamp authority of the seal (SEAL_TSA_URL): the public TSA of the seal certificate\'s issuer. With it the seals are PAdES B-LTA by default (the processor then fetches OCSP answers or CRLs from the addresses the certificates name, so it needs outbound HTTP(S) to them). Empty: B-B seals.')
param sealTsaUrl string = ''

@description('The PAdES level of every seal (SEAL_LEVEL): empty for the default (B-LTA with a TSA, else B-B), or B-B, B-T, B-LT, B-LTA (above B-B only with sealTsaUrl).')
@allowed(['', 'B-B', 'B-T', 'B-LT', 'B-LTA'])
param sealLevel string = ''

@description('How long before the last archive timestamp\'s certificate expires the RenewEvidence timer renews a sealed document\'s evidence (EVIDENCE_RENEW_BEFORE: whole days Nd or a Go duration of at least 24h).')
param evidenceRenewBefore string = '180d'

@description('The seal key: the key identifier URL of the seal certificate\'s non-exportable key in the processor\'s vault, https://<processor vault>.vault.azure.net/keys/<certificate name>[/<version>] (SEAL_KEY_VAULT_KEY_ID). Empty on the first deployment, before the certificate is imported (the processor then refuses to start); deploy again with it.')
param sealKeyVaultKeyId string = ''

@description('Days each version of a blob in signed and evidence stays immutable (version-level WORM, time-based retention); at least 1.')
@minValue(1)
@maxValue(146000)
param evidenceRetentionDays int = 3653

@description('Put the storage accounts and Key Vaults behind private endpoints in a virtual network the apps integrate with, and turn their public network access off.')
param privateNetworking bool = false

@description('privateNetworking: the virtual network\'s address space; the apps\' integration subnet is its first /24, the private endpoints\' its second.')
param vnetAddressPrefix string = '10.40.0.0/16'

var suffix = uniqueString(resourceGroup().id, prefix)
var storageName = toLower('${prefix}st${take(suffix, 10)}')
var dispatcherRuntimeName = toLower('${prefix}fd${take(suffix, 10)}')
var processorRuntimeName = toLower('${prefix}fp${take(suffix, 10)}')
var dispatcherVaultName = '${prefix}-kvd-${take(suffix, 8)}'
var processorVaultName = '${prefix}-kvp-${take(suffix, 8)}'
var publicAccess = privateNetworking ? 'Disabled' : 'Enabled'

// One identity per app: what one app may do, the other's identity cannot.
resource dispatcherIdentity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: '${prefix}-dispatcher-id'
  location: location
}

resource processorIdentity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: '${prefix}-processor-id'
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
    publicNetworkAccess: publicAccess
    networkAcls: { defaultAction: privateNetworking ? 'Deny' : 'Allow', bypass: 'None' }
  }
}

// Each app's own account for its Functions host (timer leases and host keys in blobs, the host's
// tables) and its code package (container `package`). Shared keys are off: the host reaches it
// with the app's identity (AzureWebJobsStorage__blobServiceUri/__tableServiceUri, __credential,
// __clientId) and the platform reads the package with it (WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID).
resource dispatcherRuntime 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: dispatcherRuntimeName
  location: location
  sku: { name: 'Standard_LRS' }
  kind: 'StorageV2'
  properties: {
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: publicAccess
    networkAcls: { defaultAction: privateNetworking ? 'Deny' : 'Allow', bypass: 'None' }
  }
}

resource processorRuntime 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: processorRuntimeName
  location: location
  sku: { name: 'Standard_LRS' }
  kind: 'StorageV2'
  properties: {
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: publicAccess
    networkAcls: { defaultAction: privateNetworking ? 'Deny' : 'Allow', bypass: 'None' }
  }
}

resource dispatcherRuntimeBlobs 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: dispatcherRuntime
  name: 'default'
}

resource processorRuntimeBlobs 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: processorRuntime
  name: 'default'
}

resource dispatcherPackage 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: dispatcherRuntimeBlobs
  name: 'package'
  properties: { publicAccess: 'None' }
}

resource processorPackage 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = {
  parent: processorRuntimeBlobs
  name: 'package'
  properties: { publicAccess: 'None' }
}

// Versioning is on for the account (version-level immutability needs it); deleted blobs and
// versions stay 30 days.
resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: storage
  name: 'default'
  properties: {
    isVersioningEnabled: true
    deleteRetentionPolicy: { enabled: true, days: 30 }
    containerDeleteRetentionPolicy: { enabled: true, days: 30 }
  }
}

// Every container the apps name (tests/infra checks the code's names against this list).
var containerNames = ['documents', 'templates', 'signed', 'evidence', 'deliveries', 'dispatch', 'receipts', 'bundles']

// The sealed PDFs, certificates and evidence bundles: each blob version is immutable for
// evidenceRetentionDays (version-level WORM); the seal jobs only create blobs there.
var wormContainers = ['signed', 'evidence']

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [for name in containerNames: {
  parent: blobService
  name: name
  properties: {
    publicAccess: 'None'
    immutableStorageWithVersioning: { enabled: contains(wormContainers, name) }
  }
}]

// The containers' default time-based retention: every new version in signed and evidence gets it.
resource retention 'Microsoft.Storage/storageAccounts/blobServices/containers/immutabilityPolicies@2023-05-01' = [for (name, i) in containerNames: if (contains(wormContainers, name)) {
  parent: containers[i]
  name: 'default'
  properties: {
    immutabilityPeriodSinceCreationInDays: evidenceRetentionDays
    allowProtectedAppendWrites: false
  }
}]

// Each delivery's download copy (deliveries/<tid>/<deliveryId>.pdf) is deleted by revoke; the rest go
// 31 days after they were written (a delivery session lives at most 30 days, and its copy is
// written while it lives). With versioning on, a deleted or overwritten blob leaves a previous
// version: in the containers without WORM those go after 30 days (a revoked copy's right away).
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
            actions: {
              baseBlob: { delete: { daysAfterModificationGreaterThan: 31 } }
              version: { delete: { daysAfterCreationGreaterThan: 1 } }
            }
          }
        }
        {
          name: 'previous-versions'
          enabled: true
          type: 'Lifecycle'
          definition: {
            filters: { blobTypes: [ 'blockBlob' ], prefixMatch: [ 'documents/', 'templates/', 'dispatch/', 'receipts/', 'bundles/' ] }
            actions: { version: { delete: { daysAfterCreationGreaterThan: 30 } } }
          }
        }
      ]
    }
  }
  dependsOn: [containers]
}

resource queueService 'Microsoft.Storage/storageAccounts/queueServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

var queueNames = ['seal', 'seal-poison', 'notifications', 'notifications-poison', 'deliveryupload', 'deliveryupload-poison', 'deliveryinvite', 'deliveryinvite-poison', 'portalpurge', 'portalpurge-poison', 'signeddelivery', 'signeddelivery-poison', 'dispatch', 'dispatch-poison', 'dispatch-record', 'dispatch-record-poison', 'dispatch-finish', 'dispatch-finish-poison', 'dispatch-notify', 'dispatch-notify-poison', 'workflow-notify', 'workflow-notify-poison', 'workflow-seal', 'workflow-seal-poison', 'workflow-callback', 'workflow-callback-poison', 'workflow-trigger', 'workflow-trigger-poison', 'licence-usage', 'licence-usage-poison']

resource queues 'Microsoft.Storage/storageAccounts/queueServices/queues@2023-05-01' = [for name in queueNames: {
  parent: queueService
  name: name
}]

resource tableService 'Microsoft.Storage/storageAccounts/tableServices@2023-05-01' = {
  parent: storage
  name: 'default'
}

// Every table the apps open (tests/infra checks the stores' names against this list).
var tableNames = ['esignsessions', 'esignindex', 'deliveries', 'deliveryindex', 'documents', 'dispatch', 'dispatchindex', 'workflows', 'workflowindex', 'appstatus', 'webhooks', 'webhookindex', 'eventoutbox']

resource tables 'Microsoft.Storage/storageAccounts/tableServices/tables@2023-05-01' = [for name in tableNames: {
  parent: tableService
  name: name
}]

// Built-in role definition ids.
var roles = {
  blobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  blobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  blobDataReader: '2a2b9908-6ea1-4ae2-8e65-a410df84e7d1'
  blobDelegator: 'db58b8e5-c6ad-4a2a-8342-4190687cbf4a'
  queueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  tableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
  keyVaultSecretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  keyVaultSecretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
  keyVaultCertificateUser: 'db79e9a7-68ee-4b58-9aeb-b90e7c24fcba'
  keyVaultCertificatesOfficer: 'a4417e6f-fecd-4de8-b567-7b0420556985'
  keyVaultCryptoUser: '12338af0-0e69-4776-bea7-57ae8d297424'
}

// What each app does in each container (tests/infra checks every container is someone's).
// The dispatcher writes uploads and renders (documents), batch intake (dispatch, receipts) and
// the delivery download copies (deliveries); it only reads templates, the sealed outputs and the
// bundles. The processor writes the seals (signed, evidence), the batch outputs and the copies,
// and reads templates.
var dispatcherContainerWrites = ['documents', 'dispatch', 'receipts', 'deliveries']
var dispatcherContainerReads = ['templates', 'signed', 'evidence', 'bundles']
var processorContainerWrites = ['documents', 'signed', 'evidence', 'deliveries', 'dispatch', 'receipts', 'bundles']
var processorContainerReads = ['templates']

// The queues each app's functions bind to (function.json): the dispatcher only writes (output
// bindings); the processor reads every queue, moves failures to the poison queues and re-enqueues.
var dispatcherQueues = ['seal', 'notifications', 'deliveryupload', 'deliveryinvite', 'dispatch', 'dispatch-notify', 'workflow-notify', 'workflow-seal', 'workflow-callback', 'licence-usage']

resource dispatcherContainerWriteRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in containerNames: if (contains(dispatcherContainerWrites, name)) {
  name: guid(containers[i].id, dispatcherIdentity.id, roles.blobDataContributor)
  scope: containers[i]
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataContributor)
  }
}]

resource dispatcherContainerReadRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in containerNames: if (contains(dispatcherContainerReads, name)) {
  name: guid(containers[i].id, dispatcherIdentity.id, roles.blobDataReader)
  scope: containers[i]
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataReader)
  }
}]

// User delegation keys are an account-level operation: the dispatcher signs the download links.
resource dispatcherDelegator 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(storage.id, dispatcherIdentity.id, roles.blobDelegator)
  scope: storage
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDelegator)
  }
}

resource processorContainerWriteRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in containerNames: if (contains(processorContainerWrites, name)) {
  name: guid(containers[i].id, processorIdentity.id, roles.blobDataContributor)
  scope: containers[i]
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataContributor)
  }
}]

resource processorContainerReadRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in containerNames: if (contains(processorContainerReads, name)) {
  name: guid(containers[i].id, processorIdentity.id, roles.blobDataReader)
  scope: containers[i]
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataReader)
  }
}]

resource dispatcherQueueRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in queueNames: if (contains(dispatcherQueues, name)) {
  name: guid(queues[i].id, dispatcherIdentity.id, roles.queueDataContributor)
  scope: queues[i]
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.queueDataContributor)
  }
}]

resource processorQueueRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in queueNames: {
  name: guid(queues[i].id, processorIdentity.id, roles.queueDataContributor)
  scope: queues[i]
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.queueDataContributor)
  }
}]

// Both apps open every table at start (sessions, deliveries, documents, batches, workflows and
// their indexes; appstatus; the webhook subscriptions, their index and the event outbox).
resource dispatcherTableRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in tableNames: {
  name: guid(tables[i].id, dispatcherIdentity.id, roles.tableDataContributor)
  scope: tables[i]
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.tableDataContributor)
  }
}]

resource processorTableRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [for (name, i) in tableNames: {
  name: guid(tables[i].id, processorIdentity.id, roles.tableDataContributor)
  scope: tables[i]
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.tableDataContributor)
  }
}]

// Each host's own account: Storage Blob Data Owner (leases, host keys) and Table Data
// Contributor (the host's tables), account-wide as the Functions host requires, but no write in
// the `package` container (the ABAC condition): an app cannot replace its own code.
var noPackageWrites = '((!(ActionMatches{\'Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write\'}) AND !(ActionMatches{\'Microsoft.Storage/storageAccounts/blobServices/containers/blobs/add/action\'}) AND !(ActionMatches{\'Microsoft.Storage/storageAccounts/blobServices/containers/blobs/delete\'})) OR (@Resource[Microsoft.Storage/storageAccounts/blobServices/containers:name] StringNotEquals \'package\'))'

resource dispatcherHostBlobs 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(dispatcherRuntime.id, dispatcherIdentity.id, roles.blobDataOwner)
  scope: dispatcherRuntime
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataOwner)
    conditionVersion: '2.0'
    condition: noPackageWrites
  }
}

resource dispatcherHostTables 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(dispatcherRuntime.id, dispatcherIdentity.id, roles.tableDataContributor)
  scope: dispatcherRuntime
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.tableDataContributor)
  }
}

resource processorHostBlobs 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorRuntime.id, processorIdentity.id, roles.blobDataOwner)
  scope: processorRuntime
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataOwner)
    conditionVersion: '2.0'
    condition: noPackageWrites
  }
}

resource processorHostTables 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorRuntime.id, processorIdentity.id, roles.tableDataContributor)
  scope: processorRuntime
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.tableDataContributor)
  }
}

// The deployer uploads the packages (the apps only read them, with the role above's condition).
resource dispatcherPackageUpload 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(dispatcherPackage.id, deployerObjectId, roles.blobDataContributor)
  scope: dispatcherPackage
  properties: {
    principalId: deployerObjectId
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataContributor)
  }
}

resource processorPackageUpload 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorPackage.id, deployerObjectId, roles.blobDataContributor)
  scope: processorPackage
  properties: {
    principalId: deployerObjectId
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.blobDataContributor)
  }
}

// One vault per app, holding only the secrets that app reads; secrets are set after deployment
// (infra/README.md) and referenced by name. The processor's vault also holds the seal
// certificate (imported with a non-exportable key).
resource dispatcherVault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: dispatcherVaultName
  location: location
  properties: {
    tenantId: subscription().tenantId
    sku: { family: 'A', name: 'standard' }
    enableRbacAuthorization: true
    enableSoftDelete: true
    enablePurgeProtection: true
    publicNetworkAccess: publicAccess
    networkAcls: { defaultAction: privateNetworking ? 'Deny' : 'Allow', bypass: 'None' }
  }
}

resource processorVault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: processorVaultName
  location: location
  properties: {
    tenantId: subscription().tenantId
    sku: { family: 'A', name: 'premium' } // RSA-HSM keys for the seal
    enableRbacAuthorization: true
    enableSoftDelete: true
    enablePurgeProtection: true
    publicNetworkAccess: publicAccess
    networkAcls: { defaultAction: privateNetworking ? 'Deny' : 'Allow', bypass: 'None' }
  }
}

resource dispatcherVaultReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(dispatcherVault.id, dispatcherIdentity.id, roles.keyVaultSecretsUser)
  scope: dispatcherVault
  properties: {
    principalId: dispatcherIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
  }
}

// The processor's secrets, and the seal certificate's secret (its chain) and certificate object.
resource processorVaultReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorVault.id, processorIdentity.id, roles.keyVaultSecretsUser)
  scope: processorVault
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsUser)
  }
}

resource processorCertificateReader 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorVault.id, processorIdentity.id, roles.keyVaultCertificateUser)
  scope: processorVault
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultCertificateUser)
  }
}

// The seal key: the key of the certificate named in sealKeyVaultKeyId, in the processor's vault.
// Only the processor's identity may sign with it (Key Vault Crypto User on that key alone).
var sealKeyName = empty(sealKeyVaultKeyId) ? 'seal' : split(sealKeyVaultKeyId, '/')[4]

resource sealKey 'Microsoft.KeyVault/vaults/keys@2023-07-01' existing = {
  parent: processorVault
  name: sealKeyName
}

resource sealKeySigner 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(sealKeyVaultKeyId)) {
  name: guid(processorVault.id, sealKeyName, processorIdentity.id, roles.keyVaultCryptoUser)
  scope: sealKey
  properties: {
    principalId: processorIdentity.properties.principalId
    principalType: 'ServicePrincipal'
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultCryptoUser)
  }
}

resource dispatcherVaultAdmin 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(dispatcherVault.id, secretsAdminObjectId, roles.keyVaultSecretsOfficer)
  scope: dispatcherVault
  properties: {
    principalId: secretsAdminObjectId
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
  }
}

resource processorVaultAdmin 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorVault.id, secretsAdminObjectId, roles.keyVaultSecretsOfficer)
  scope: processorVault
  properties: {
    principalId: secretsAdminObjectId
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultSecretsOfficer)
  }
}

resource processorCertificateAdmin 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(processorVault.id, secretsAdminObjectId, roles.keyVaultCertificatesOfficer)
  scope: processorVault
  properties: {
    principalId: secretsAdminObjectId
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roles.keyVaultCertificatesOfficer)
  }
}

// The secrets each app reads, each in that app's vault (the shared ones are set in both).
var dispatcherSecretNames = ['token-keys', 'pii-hash-key', 'pii-enc-keys', 'portal-callback-secrets', 'licence', 'notification-service-key', 'smtp-password']
var processorSecretNames = ['token-keys', 'pii-hash-key', 'pii-enc-keys', 'portal-callback-secrets', 'licence', 'notification-service-key', 'smtp-password', 'webhook-secrets']
var dispatcherKv = reduce(dispatcherSecretNames, {}, (acc, name) => union(acc, { '${name}': '@Microsoft.KeyVault(VaultName=${dispatcherVault.name};SecretName=${name})' }))
var processorKv = reduce(processorSecretNames, {}, (acc, name) => union(acc, { '${name}': '@Microsoft.KeyVault(VaultName=${processorVault.name};SecretName=${name})' }))

// privateNetworking: a virtual network with the apps' integration subnet and a subnet for the
// private endpoints of the three storage accounts and the two vaults, and the private DNS zones
// the apps resolve them through.
resource vnet 'Microsoft.Network/virtualNetworks@2023-11-01' = if (privateNetworking) {
  name: '${prefix}-vnet'
  location: location
  properties: {
    addressSpace: { addressPrefixes: [ vnetAddressPrefix ] }
    subnets: [
      {
        name: 'apps'
        properties: {
          addressPrefix: cidrSubnet(vnetAddressPrefix, 24, 0)
          delegations: [ { name: 'web', properties: { serviceName: 'Microsoft.Web/serverFarms' } } ]
        }
      }
      {
        name: 'endpoints'
        properties: {
          addressPrefix: cidrSubnet(vnetAddressPrefix, 24, 1)
          privateEndpointNetworkPolicies: 'Disabled'
        }
      }
    ]
  }
}

var appsSubnetId = resourceId('Microsoft.Network/virtualNetworks/subnets', '${prefix}-vnet', 'apps')
var endpointsSubnetId = resourceId('Microsoft.Network/virtualNetworks/subnets', '${prefix}-vnet', 'endpoints')

var privateZones = ['privatelink.blob.${environment().suffixes.storage}', 'privatelink.queue.${environment().suffixes.storage}', 'privatelink.table.${environment().suffixes.storage}', 'privatelink.vaultcore.azure.net']

resource zones 'Microsoft.Network/privateDnsZones@2020-06-01' = [for zone in privateZones: if (privateNetworking) {
  name: zone
  location: 'global'
}]

resource zoneLinks 'Microsoft.Network/privateDnsZones/virtualNetworkLinks@2020-06-01' = [for (zone, i) in privateZones: if (privateNetworking) {
  parent: zones[i]
  name: '${prefix}-vnet'
  location: 'global'
  properties: {
    registrationEnabled: false
    virtualNetwork: { id: vnet.id }
  }
}]

// Each endpoint: the resource, its sub-resource (group) and the index of its zone above. The
// data account's queues are where the processor's triggers read; the runtime accounts' blobs and
// tables the hosts' own storage and the packages.
var endpoints = [
  { name: 'st-blob', id: storage.id, group: 'blob', zone: 0 }
  { name: 'st-queue', id: storage.id, group: 'queue', zone: 1 }
  { name: 'st-table', id: storage.id, group: 'table', zone: 2 }
  { name: 'fd-blob', id: dispatcherRuntime.id, group: 'blob', zone: 0 }
  { name: 'fd-table', id: dispatcherRuntime.id, group: 'table', zone: 2 }
  { name: 'fp-blob', id: processorRuntime.id, group: 'blob', zone: 0 }
  { name: 'fp-table', id: processorRuntime.id, group: 'table', zone: 2 }
  { name: 'kvd', id: dispatcherVault.id, group: 'vault', zone: 3 }
  { name: 'kvp', id: processorVault.id, group: 'vault', zone: 3 }
]

resource privateEndpoints 'Microsoft.Network/privateEndpoints@2023-11-01' = [for ep in endpoints: if (privateNetworking) {
  name: '${prefix}-pe-${ep.name}'
  location: location
  properties: {
    subnet: { id: endpointsSubnetId }
    privateLinkServiceConnections: [
      {
        name: ep.name
        properties: { privateLinkServiceId: ep.id, groupIds: [ ep.group ] }
      }
    ]
  }
  dependsOn: [vnet]
}]

resource endpointZones 'Microsoft.Network/privateEndpoints/privateDnsZoneGroups@2023-11-01' = [for (ep, i) in endpoints: if (privateNetworking) {
  parent: privateEndpoints[i]
  name: 'default'
  properties: {
    privateDnsZoneConfigs: [ { name: 'zone', properties: { privateDnsZoneId: zones[ep.zone].id } } ]
  }
}]

resource insights 'Microsoft.Insights/components@2020-02-02' = {
  name: '${prefix}-ai'
  location: location
  kind: 'web'
  properties: { Application_Type: 'web' }
}

resource plan 'Microsoft.Web/serverfarms@2023-12-01' = {
  name: '${prefix}-plan'
  location: location
  kind: 'elastic'
  sku: { name: planSku, tier: 'ElasticPremium' }
  properties: { reserved: true }
}

// Settings both apps take as they are (no identity, no vault reference: those are each app's own).
var commonSettings = [
  { name: 'FUNCTIONS_EXTENSION_VERSION', value: '~4' }
  { name: 'FUNCTIONS_WORKER_RUNTIME', value: 'custom' }
  { name: 'APPLICATIONINSIGHTS_CONNECTION_STRING', value: insights.properties.ConnectionString }
  // Queue triggers and output bindings (connection AzureWebJobsStorage) use the data account's
  // queues; the host's blobs and tables are in the app's own account (below).
  { name: 'AzureWebJobsStorage__queueServiceUri', value: storage.properties.primaryEndpoints.queue }
  { name: 'AzureWebJobsStorage__credential', value: 'managedidentity' }
  // The handlers' storage, by identity.
  { name: 'STORAGE_ACCOUNT_NAME', value: storage.name }
  { name: 'PORTAL_URL', value: portalUrl }
  { name: 'EMAIL_PROVIDER', value: emailProvider }
  // Document-library uploads through Microsoft Graph with the app's identity (grant it
  // Sites.Selected on the customer's site; without the grant uploads fail with graph_forbidden).
  { name: 'GRAPH_USE_MANAGED_IDENTITY', value: 'true' }
  { name: 'SMS_PROVIDER', value: smsProvider }
  { name: 'LICENCE_PUBLIC_KEY', value: licencePublicKey }
  { name: 'LICENSING_URL', value: licensingUrl }
]

// The chosen providers' own settings (both apps send: the dispatcher OTP codes, the processor
// the rest); each app refuses to start without the ones its providers need. Their secrets and
// ACS_CLIENT_ID are each app's own (below).
var operatorSettings = emailProvider == 'operator' ? [
  { name: 'NOTIFICATION_SERVICE_URL', value: notificationServiceUrl }
] : []

var acsSettings = concat([
  { name: 'ACS_ENDPOINT', value: acsEndpoint }
  { name: 'ACS_SMS_FROM', value: acsSmsFrom }
], emailProvider == 'customer-acs' ? [
  { name: 'ACS_EMAIL_SENDER', value: acsEmailSender }
] : [])

var smtpSettings = emailProvider == 'smtp' ? [
  { name: 'SMTP_HOST', value: smtpHost }
  { name: 'SMTP_PORT', value: smtpPort }
  { name: 'SMTP_USERNAME', value: smtpUsername }
  { name: 'SMTP_FROM', value: smtpFrom }
] : []

// Each app's identity, vault references and code package.
var dispatcherSettings = concat([
  { name: 'AzureWebJobsStorage__blobServiceUri', value: dispatcherRuntime.properties.primaryEndpoints.blob }
  { name: 'AzureWebJobsStorage__tableServiceUri', value: dispatcherRuntime.properties.primaryEndpoints.table }
  { name: 'AzureWebJobsStorage__clientId', value: dispatcherIdentity.properties.clientId }
  { name: 'WEBSITE_RUN_FROM_PACKAGE', value: '${dispatcherRuntime.properties.primaryEndpoints.blob}package/dispatcher.zip' }
  { name: 'WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID', value: dispatcherIdentity.id }
  { name: 'STORAGE_CLIENT_ID', value: dispatcherIdentity.properties.clientId }
  { name: 'GRAPH_IDENTITY_CLIENT_ID', value: dispatcherIdentity.properties.clientId }
  { name: 'ACS_CLIENT_ID', value: dispatcherIdentity.properties.clientId }
  { name: 'TOKEN_KEYS', value: dispatcherKv['token-keys'] }
  { name: 'PII_HASH_KEY', value: dispatcherKv['pii-hash-key'] }
  { name: 'PII_ENC_KEYS', value: dispatcherKv['pii-enc-keys'] }
  { name: 'PORTAL_CALLBACK_SECRETS', value: dispatcherKv['portal-callback-secrets'] }
  { name: 'LICENCE', value: dispatcherKv.licence }
  { name: 'AUTH_ISSUER', value: authIssuer }
  { name: 'AUTH_AUDIENCE', value: authAudience }
  { name: 'AUTH_JWKS_URL', value: authJwksUrl }
  { name: 'TRUSTED_PROXY_HOPS', value: string(trustedProxyHops) }
  { name: 'DISPATCH_ALLOW_SELF_APPROVAL', value: string(dispatchAllowSelfApproval) }
], emailProvider == 'operator' ? [
  { name: 'NOTIFICATION_SERVICE_KEY', value: dispatcherKv['notification-service-key'] }
] : [], emailProvider == 'smtp' ? [
  { name: 'SMTP_PASSWORD', value: dispatcherKv['smtp-password'] }
] : [])

var processorSettings = concat([
  { name: 'AzureWebJobsStorage__blobServiceUri', value: processorRuntime.properties.primaryEndpoints.blob }
  { name: 'AzureWebJobsStorage__tableServiceUri', value: processorRuntime.properties.primaryEndpoints.table }
  { name: 'AzureWebJobsStorage__clientId', value: processorIdentity.properties.clientId }
  { name: 'WEBSITE_RUN_FROM_PACKAGE', value: '${processorRuntime.properties.primaryEndpoints.blob}package/processor.zip' }
  { name: 'WEBSITE_RUN_FROM_PACKAGE_BLOB_MI_RESOURCE_ID', value: processorIdentity.id }
  { name: 'STORAGE_CLIENT_ID', value: processorIdentity.properties.clientId }
  { name: 'GRAPH_IDENTITY_CLIENT_ID', value: processorIdentity.properties.clientId }
  { name: 'ACS_CLIENT_ID', value: processorIdentity.properties.clientId }
  { name: 'TOKEN_KEYS', value: processorKv['token-keys'] }
  { name: 'PII_HASH_KEY', value: processorKv['pii-hash-key'] }
  { name: 'PII_ENC_KEYS', value: processorKv['pii-enc-keys'] }
  // The seal: the certificate's key in the processor's vault, used through Key Vault's sign.
  { name: 'SEAL_KEY_VAULT_KEY_ID', value: sealKeyVaultKeyId }
  { name: 'SEAL_KEY_VAULT_CLIENT_ID', value: processorIdentity.properties.clientId }
  // The seal's level: a TSA makes it B-LTA unless sealLevel says otherwise; the daily renewal.
  { name: 'SEAL_TSA_URL', value: sealTsaUrl }
  { name: 'SEAL_LEVEL', value: sealLevel }
  { name: 'EVIDENCE_RENEW_BEFORE', value: evidenceRenewBefore }
  // The post-seal purge at the portal, signed with the shared portal secret.
  { name: 'PORTAL_API_URL', value: portalApiUrl }
  { name: 'PORTAL_CALLBACK_SECRETS', value: processorKv['portal-callback-secrets'] }
  { name: 'DISPATCH_APPROVERS', value: dispatchApprovers }
  // The workflows' terminal callbacks, signed with the operator's webhook secrets.
  { name: 'WEBHOOK_SECRETS', value: processorKv['webhook-secrets'] }
  // The licence again: the auto-trigger and batch record jobs check it before they act.
  { name: 'LICENCE', value: processorKv.licence }
], emailProvider == 'operator' ? [
  { name: 'NOTIFICATION_SERVICE_KEY', value: processorKv['notification-service-key'] }
] : [], emailProvider == 'smtp' ? [
  { name: 'SMTP_PASSWORD', value: processorKv['smtp-password'] }
] : [])

resource dispatcher 'Microsoft.Web/sites@2023-12-01' = {
  name: '${prefix}-dispatcher-${take(suffix, 6)}'
  location: location
  kind: 'functionapp,linux'
  identity: { type: 'UserAssigned', userAssignedIdentities: { '${dispatcherIdentity.id}': {} } }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    keyVaultReferenceIdentity: dispatcherIdentity.id
    virtualNetworkSubnetId: privateNetworking ? appsSubnetId : null
    vnetRouteAllEnabled: privateNetworking
    siteConfig: {
      linuxFxVersion: ''
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      functionsRuntimeScaleMonitoringEnabled: true
      cors: { allowedOrigins: [] } // the app answers CORS for the portal origin itself
      appSettings: concat(commonSettings, operatorSettings, acsSettings, smtpSettings, dispatcherSettings)
    }
  }
  dependsOn: [dispatcherContainerWriteRoles, dispatcherContainerReadRoles, dispatcherDelegator, dispatcherQueueRoles, dispatcherTableRoles, dispatcherHostBlobs, dispatcherHostTables, dispatcherVaultReader, vnet]
}

resource processor 'Microsoft.Web/sites@2023-12-01' = {
  name: '${prefix}-processor-${take(suffix, 6)}'
  location: location
  kind: 'functionapp,linux'
  identity: { type: 'UserAssigned', userAssignedIdentities: { '${processorIdentity.id}': {} } }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    keyVaultReferenceIdentity: processorIdentity.id
    virtualNetworkSubnetId: privateNetworking ? appsSubnetId : null
    vnetRouteAllEnabled: privateNetworking
    siteConfig: {
      linuxFxVersion: ''
      minTlsVersion: '1.2'
      ftpsState: 'Disabled'
      functionsRuntimeScaleMonitoringEnabled: true
      appSettings: concat(commonSettings, operatorSettings, acsSettings, smtpSettings, processorSettings)
    }
  }
  dependsOn: [processorContainerWriteRoles, processorContainerReadRoles, processorQueueRoles, processorTableRoles, processorHostBlobs, processorHostTables, processorVaultReader, processorCertificateReader, sealKeySigner, vnet]
}

// SCM (Kudu) and FTP basic authentication off: deployments go through the package URL.
resource dispatcherScm 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2023-12-01' = {
  parent: dispatcher
  name: 'scm'
  properties: { allow: false }
}

resource dispatcherFtp 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2023-12-01' = {
  parent: dispatcher
  name: 'ftp'
  properties: { allow: false }
}

resource processorScm 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2023-12-01' = {
  parent: processor
  name: 'scm'
  properties: { allow: false }
}

resource processorFtp 'Microsoft.Web/sites/basicPublishingCredentialsPolicies@2023-12-01' = {
  parent: processor
  name: 'ftp'
  properties: { allow: false }
}

output dispatcherUrl string = 'https://${dispatcher.properties.defaultHostName}/api'
output storageAccount string = storage.name
output dispatcherRuntimeAccount string = dispatcherRuntime.name
output processorRuntimeAccount string = processorRuntime.name
output dispatcherVault string = dispatcherVault.name
output processorVault string = processorVault.name
output dispatcherIdentityClientId string = dispatcherIdentity.properties.clientId
output processorIdentityClientId string = processorIdentity.properties.clientId
