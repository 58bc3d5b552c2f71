import { ensureAzurite, type RunningAzurite } from "../../devkit/azurite";

let azurite: RunningAzurite | undefined;

/** One Azurite for the whole suite: the one CI started, or one of our own. */
export async function setup(): Promise<void> {
  // The Node the suite runs on: package.json's `node` dev dependency via node_modules/.bin, not the machine's.
  console.log(`vitest on Node ${process.version} (${process.execPath})`);
  azurite = await ensureAzurite();
  process.env.POOLSYNC_TEST_STORAGE = azurite.connectionString;
}

export async function teardown(): Promise<void> {
  await azurite?.stop();
}
