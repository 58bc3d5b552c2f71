#!/bin/sh
# azd postprovision hook: with POOLSYNC_GITHUB_OIDC_SUBJECT set, the GitHub workflow signs in as the deploy identity and
# provisions main.json itself, which needs more than the Website Contributor the template gives that identity. You
# (who ran azd up) grant it, on poolsync's resource group only: Contributor, and Role Based Access Control
# Administrator restricted by a condition to the roles main.json assigns (ROLES below, main.json's variables.roles,
# kept equal by test/infra/deployFiles.test.ts), so the workflow cannot grant itself or anyone anything else. Done again
# on every provision; an assignment that exists is left as it is.
set -eu
if [ -z "$(azd env get-value POOLSYNC_GITHUB_OIDC_SUBJECT 2>/dev/null || true)" ]; then
  echo "poolsync: no GitHub workflow (POOLSYNC_GITHUB_OIDC_SUBJECT unset): the deploy identity keeps Website Contributor only"
  exit 0
fi
ROLES="b7e6dc6d-f1e8-4753-8033-0f276bb0955b, ba92f5b4-2d11-453d-a403-e96b0029c9fe, 974c5e8b-45b9-4653-ba55-5f855dd0fb88, 0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3, 3913510d-42f4-4e42-8a64-420c390055eb, de139f84-1756-47ae-9be6-808fbbe84772"
scope="/subscriptions/$(azd env get-value AZURE_SUBSCRIPTION_ID)/resourceGroups/$(azd env get-value AZURE_RESOURCE_GROUP)"
principal=$(az ad sp show --id "$(azd env get-value POOLSYNC_DEPLOY_CLIENT_ID)" --query id -o tsv)
condition="((!(ActionMatches{'Microsoft.Authorization/roleAssignments/write'})) OR (@Request[Microsoft.Authorization/roleAssignments:RoleDefinitionId] ForAnyOfAnyValues:GuidEquals {$ROLES})) AND ((!(ActionMatches{'Microsoft.Authorization/roleAssignments/delete'})) OR (@Resource[Microsoft.Authorization/roleAssignments:RoleDefinitionId] ForAnyOfAnyValues:GuidEquals {$ROLES}))"
assigned() {
  [ -n "$(az role assignment list --assignee "$principal" --role "$1" --scope "$scope" --query '[0].id' -o tsv)" ]
}
assigned Contributor || az role assignment create --assignee-object-id "$principal" \
  --assignee-principal-type ServicePrincipal --role Contributor --scope "$scope" >/dev/null
assigned "Role Based Access Control Administrator" || az role assignment create --assignee-object-id "$principal" \
  --assignee-principal-type ServicePrincipal --role "Role Based Access Control Administrator" --scope "$scope" \
  --condition "$condition" --condition-version 2.0 >/dev/null
echo "poolsync: the deploy identity may provision $scope (Contributor; role assignments of main.json's roles only)"
