#!/bin/sh
# azd postdeploy hook: the code is live now, so the same Bicep deployment runs once more with the Event Grid
# subscription to onResourceEvent on (Event Grid checks that the function exists when the subscription is created).
# Idempotent: once POOLSYNC_SUBSCRIBE_EVENTS is true, later `azd up` runs provision it in the first pass already.
set -eu
if [ "$(azd env get-value POOLSYNC_SUBSCRIBE_EVENTS 2>/dev/null || true)" = "true" ]; then
  echo "poolsync: Event Grid subscription already part of the deployment"
  exit 0
fi
azd env set POOLSYNC_SUBSCRIBE_EVENTS true
azd provision --no-prompt
