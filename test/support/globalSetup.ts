import { ensureAzurite, startAzurite, type RunningAzurite } from "../../devkit/azurite";
import { freePorts } from "../../devkit/freePorts";

let azurite: RunningAzurite | undefined;

/**
 * One Azurite for the whole suite: the one CI started, or one of our own. With POOLSYNC_TEST_AZURITE=own (the fast
 * loop sets it) always one of our own, in memory on free ports, stopped at the end: every test makes tables and queues
 * of its own (about 1,100 of each a run) and nothing deletes them, so an Azurite kept across runs answers ever more
 * slowly (its CPU for one fast run went from 27 s to 58 s after seven runs, 8,000 tables). Ours is not waited for
 * here: it takes about 2.5 s to listen, while the workers start and import their first files; each worker waits for it
 * before its first test (test/support/storageReady.ts).
 */
export async function setup(): Promise<void> {
  // The Node the suite runs on: package.json's `node` dev dependency via node_modules/.bin, not the machine's.
  console.log(`vitest on Node ${process.version} (${process.execPath})`);
  if (process.env.POOLSYNC_TEST_AZURITE === "own") {
    const [blob, queue, table] = (await freePorts(3)) as [number, number, number];
    const starting = startAzurite({ blob, queue, table });
    starting.ready.catch((err: unknown) => console.error(`the suite's Azurite did not start: ${String(err)}`));
    azurite = starting;
  } else azurite = await ensureAzurite();
  process.env.POOLSYNC_TEST_STORAGE = azurite.connectionString;
}

export async function teardown(): Promise<void> {
  await azurite?.stop();
}
