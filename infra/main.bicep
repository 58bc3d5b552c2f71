// azd's entry point (azure.yaml): a thin wrapper that deploys infra/main.json, the template test/infra checks offline
// (ARM schemas, the REST API specification of each api-version, every KQL query, the path to storage), into a
// resource group of its own, and grants poolsync its ARM role on each resource-group scope of poolsyncScopes with
// infra/access.json. It holds no resource of its own on purpose: main.json is the source (infra/README.md says why).
//
// NOT COMPILED HERE: the Bicep compiler cannot run on this project's machines (azd fetches its own where you run
// `azd up`). test/infra/deployFiles.test.ts checks only its text: every main.json parameter is declared and passed
// through unchanged, and main.parameters.json names only parameters declared here. Run
// `az bicep build --file infra/main.bicep` after changing it.
targetScope = 'subscription'

@minLength(1)
@maxLength(64)
@description('azd environment name: the resource group is rg-<environmentName>.')
param environmentName string

@description('Region of the resource group and every regional resource (must offer Flex Consumption).')
param location string

@minLength(1)
@description('POOLSYNC_SCOPES: comma-separated /subscriptions/{id} or /subscriptions/{id}/resourceGroups/{name} that poolsync may read and write. Grant each one with infra/access.json.')
param poolsyncScopes string

@minLength(1)
@description('POOLSYNC_BINDINGS (required, no default): which scale sets and VMs may join which backend pools (rules `target prefix => pool prefix`, `*` = one segment, separated by `;`; docs/api.md). To allow every pairing inside poolsyncScopes, say so with an explicit rule: `/subscriptions/* => /subscriptions/*`.')
param poolsyncBindings string

@secure()
@minLength(32)
@description('POOLSYNC_CACHE_KEY: the HMAC key of poolsync\'s cache rows, one for every host (docs/bindings.md). Default: 72 random characters made at this deployment, so a redeployment rotates it (one ARM re-read per cached row). Pass your own to keep it.')
param poolsyncCacheKey string = concat(newGuid(), newGuid())

@minLength(1)
@description('Application (client) ID of the Microsoft Entra app registration that callers get tokens for and that defines the app roles poolsync.Read and poolsync.Declare (infra/README.md). App Service authentication validates the tokens; the app checks the roles.')
param authClientId string

@description('Tenant of that app registration; default the subscription\'s.')
param authTenantId string = ''

@description('Make a virtual network for the app: its delegated subnet, private endpoints for blob, queue and table storage with their private DNS zones, storage\'s public endpoint off (infra/README.md). false: no network; storage takes every network (Entra ID only).')
param vnetEnabled bool = true

@description('Bring your own network: a subnet delegated to Microsoft.App/environments with the Microsoft.Storage service endpoint. Set, no network is made; storage admits this subnet through its service endpoint.')
param appSubnetId string = ''

@description('Let the storage account accept connections from any network even though the app reaches it privately (still Entra ID only). Off by default.')
param storageAllowAllNetworks bool = false

@description('Public IPv4 addresses or CIDR ranges (e.g. a self-hosted deployment runner) that may reach the storage account through its firewall.')
param storageAllowedIpRanges array = []

@minValue(1)
@maxValue(365)
@description('Days an Event Grid dead-letter blob is kept before the lifecycle policy deletes it (dead-letters carry the callers\' claims of the ARM events).')
param deadLetterRetentionInDays int = 14

@minLength(2)
@maxLength(12)
@description('Short lowercase prefix for resource names.')
param appName string = 'poolsync'

@allowed(['subscription', 'resourceGroup'])
@description('Source of the Azure Resource Manager events: this deployment\'s subscription, or a resource group in it (eventResourceGroupName).')
param eventSource string = 'subscription'

@description('With eventSource=resourceGroup: the resource group (in this subscription) whose events poolsync receives.')
param eventResourceGroupName string = ''

@description('Create the Event Grid subscription to onResourceEvent. Event Grid checks that the function exists, so set true only after the code is deployed (infra/README.md, step 4).')
param subscribeEvents bool = false

@minValue(1)
@maxValue(30)
@description('Event Grid retry policy: delivery attempts before dead-lettering.')
param eventMaxDeliveryAttempts int = 30

@minValue(1)
@maxValue(1440)
@description('Event Grid retry policy: minutes an undelivered event is retried before dead-lettering.')
param eventTimeToLiveInMinutes int = 1440

@minValue(1)
@maxValue(1000)
@description('Flex Consumption scale-out limit (1-1000). Fewer instances means fewer concurrent ARM writers competing for the per-scale-set write budget.')
param maximumInstanceCount int = 40

@allowed([512, 2048, 4096])
@description('Flex Consumption instance memory size.')
param instanceMemoryMB int = 2048

@description('Flex Consumption always-ready instances: [{name, instanceCount}], name `http`, `blob`, `durable` or `function:<name>`. Empty = scale from zero. For no cold start on repairs: [{"name":"function:applyBackendPools","instanceCount":1},{"name":"function:onResourceEvent","instanceCount":1}] (billed while idle; infra/README.md).')
param alwaysReady array = []

@description('Flex Consumption zone redundancy: instances spread over availability zones (region must support it; needs zone-redundant storage for the host, and at least 2 always-ready instances per group to survive a zone outage). Set only at plan creation.')
param zoneRedundant bool = false

@minValue(30)
@maxValue(730)
@description('Log Analytics retention.')
param logRetentionInDays int = 30

@description('Email address the action group notifies when an alert fires. Empty = the action group has no receiver (alerts still show in Azure Monitor).')
param alertEmail string = ''

@description('Whether the alert rules are enabled.')
param alertsEnabled bool = true

@minValue(1)
@description('Alert when the 95th percentile of declare-to-applied convergence (poolsync.declaration.convergence) over 5 minutes is above this many seconds.')
param convergenceP95ThresholdSeconds int = 120

@minValue(1)
@maxValue(1000)
@description('Alert when ARM errors (poolsync.arm.requests with status 5xx or 400/401/403) exceed this many per thousand requests over 15 minutes (5 = 0.5 %).')
param armErrorRatePerMille int = 5

@description('GitHub Actions OIDC subject allowed to sign in as the deploy identity, e.g. repo:<owner>/<repo>:environment:production. Empty = no federated credential (sign in as the deploy identity some other way, or deploy with azd as yourself).')
param githubOidcSubject string = ''

resource rg 'Microsoft.Resources/resourceGroups@2024-03-01' = {
  name: 'rg-${environmentName}'
  location: location
  tags: {
    'azd-env-name': environmentName
    app: 'poolsync'
  }
}

module app 'main.json' = {
  name: 'poolsync'
  scope: rg
  params: {
    location: location
    poolsyncScopes: poolsyncScopes
    poolsyncBindings: poolsyncBindings
    poolsyncCacheKey: poolsyncCacheKey
    authClientId: authClientId
    authTenantId: empty(authTenantId) ? null : authTenantId
    vnetEnabled: vnetEnabled
    appSubnetId: appSubnetId
    storageAllowAllNetworks: storageAllowAllNetworks
    storageAllowedIpRanges: storageAllowedIpRanges
    deadLetterRetentionInDays: deadLetterRetentionInDays
    appName: appName
    eventSource: eventSource
    eventResourceGroupName: empty(eventResourceGroupName) ? null : eventResourceGroupName
    subscribeEvents: subscribeEvents
    eventMaxDeliveryAttempts: eventMaxDeliveryAttempts
    eventTimeToLiveInMinutes: eventTimeToLiveInMinutes
    maximumInstanceCount: maximumInstanceCount
    instanceMemoryMB: instanceMemoryMB
    alwaysReady: alwaysReady
    zoneRedundant: zoneRedundant
    logRetentionInDays: logRetentionInDays
    alertEmail: alertEmail
    alertsEnabled: alertsEnabled
    convergenceP95ThresholdSeconds: convergenceP95ThresholdSeconds
    armErrorRatePerMille: armErrorRatePerMille
    githubOidcSubject: githubOidcSubject
  }
}

// access.json's schema makes it a resource-group template, so Bicep can deploy it here only at resource-group scopes;
// grant a subscription scope with `az deployment sub create` (infra/README.md).
var scopes = filter(map(split(poolsyncScopes, ','), s => trim(s)), s => !empty(s))
var groupScopes = filter(scopes, s => contains(toLower(s), '/resourcegroups/'))

module access 'access.json' = [
  for (scope, i) in groupScopes: {
    name: 'poolsync-access-${i}'
    scope: resourceGroup(split(scope, '/')[2], split(scope, '/')[4])
    params: {
      targetScope: scope
      principalId: app.outputs.principalId
    }
  }
]

output AZURE_RESOURCE_GROUP string = rg.name
output AZURE_FUNCTION_APP_NAME string = app.outputs.functionAppName
output POOLSYNC_URL string = app.outputs.functionAppUrl
output POOLSYNC_PRINCIPAL_ID string = app.outputs.principalId
output POOLSYNC_DEPLOY_CLIENT_ID string = app.outputs.deployClientId
output POOLSYNC_SYSTEM_TOPIC string = app.outputs.systemTopicName
output POOLSYNC_SUBSCRIBED_EVENTS bool = app.outputs.eventSubscriptionCreated
