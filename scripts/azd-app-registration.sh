#!/bin/sh
# azd preprovision hook: the Microsoft Entra app registration callers get tokens for (ARM cannot create one), made once
# per azd environment and reused after: display name poolsync-<environment>, Application ID URI api://<client id>, the
# app roles of infra/app-roles.json (poolsync.Read, poolsync.Declare), a service principal so roles can be assigned,
# and the signed-in user given both roles (so `npm run smoke` works at once). Its client ID goes to
# POOLSYNC_AUTH_CLIENT_ID, which main.parameters.json passes to the template. Needs `az login` with the right to
# register applications in the tenant (the default for members; otherwise Application Developer).
set -eu
if [ -n "$(azd env get-value POOLSYNC_AUTH_CLIENT_ID 2>/dev/null || true)" ]; then
  echo "poolsync: app registration already set (POOLSYNC_AUTH_CLIENT_ID)"
  exit 0
fi
name="poolsync-$(azd env get-value AZURE_ENV_NAME)"
app_id=$(az ad app list --filter "displayName eq '$name'" --query '[0].appId' -o tsv)
if [ -z "$app_id" ]; then
  app_id=$(az ad app create --display-name "$name" --sign-in-audience AzureADMyOrg \
    --app-roles @infra/app-roles.json --query appId -o tsv)
  echo "poolsync: app registration $name created ($app_id)"
fi
az ad app update --id "$app_id" --identifier-uris "api://$app_id"
sp_id=$(az ad sp list --filter "appId eq '$app_id'" --query '[0].id' -o tsv)
[ -n "$sp_id" ] || sp_id=$(az ad sp create --id "$app_id" --query id -o tsv)
user_id=$(az ad signed-in-user show --query id -o tsv 2>/dev/null || true)
if [ -n "$user_id" ]; then
  graph=$(az cloud show --query endpoints.microsoftGraphResourceId -o tsv | sed 's#/*$##')
  for role in $(az ad app show --id "$app_id" --query 'appRoles[].id' -o tsv); do
    az rest --method post --url "$graph/v1.0/servicePrincipals/$sp_id/appRoleAssignedTo" \
      --body "{\"principalId\":\"$user_id\",\"resourceId\":\"$sp_id\",\"appRoleId\":\"$role\"}" >/dev/null 2>&1 || true
  done
fi
azd env set POOLSYNC_AUTH_CLIENT_ID "$app_id"
