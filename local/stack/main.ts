import { findAppDir } from "../host/appDir";
import { resolveLocalOptions, USAGE, UsageError } from "./localOptions";
import { loadLocalSettings } from "../host/settings";
import { startLocalStack } from "./stack";

/**
 * `npm run local`: Azurite, the ARM simulator and the app's functions on this machine, until Ctrl-C.
 * See docs/local.md.
 */

async function main(argv: string[]): Promise<void> {
  const appDir = findAppDir(__dirname);
  const opts = resolveLocalOptions(argv, process.env, loadLocalSettings(appDir), appDir);
  if (opts.help) {
    console.log(USAGE);
    return;
  }
  const stack = await startLocalStack(opts);
  for (const line of stack.summary()) console.log(line);
  console.log(`\npoolsync local is ready on ${stack.runtime.url} — Ctrl-C to stop.`);

  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    signals++;
    if (signals > 1) {
      console.error(`${signal} again: exiting without waiting.`);
      process.exit(130);
    }
    console.log(`\n${signal}: stopping — no new work; draining in-flight invocations…`);
    stack.stop().then(
      ({ droppedEvents }) => {
        console.log(`Stopped${droppedEvents ? ` (${droppedEvents} undelivered ARM event(s) dropped)` : ""}.`);
        process.exit(0);
      },
      (err: unknown) => {
        console.error(`Stopping failed: ${(err as Error)?.stack ?? String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(
      err instanceof UsageError ? err.message : `npm run local failed: ${(err as Error)?.stack ?? String(err)}`,
    );
    process.exit(err instanceof UsageError ? 2 : 1);
  });
}
