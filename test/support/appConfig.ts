import { testStorageConnectionString, uniqueName } from "../../devkit/storage";
import { loadConfig, type Config } from "../../src/config";
import { DEMO } from "./harness";

/** The app's settings over the suite's Azurite, with a targets table of the test's own, and `env` on top. */
export function azuriteConfig(env: Record<string, string> = {}): Config {
  return loadConfig({
    POOLSYNC_SCOPES: `/subscriptions/${DEMO.subscription}`,
    POOLSYNC_BINDINGS: "*",
    AzureWebJobsStorage: testStorageConnectionString(),
    POOLSYNC_MEMBERSHIPS_TABLE: uniqueName("targets"),
    ...env,
  });
}
