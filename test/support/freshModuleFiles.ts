/**
 * Fast files that must each have a fresh module graph: they call the Functions app's handlers, whose services are built
 * once per module graph from process.env (`services()` in src/app/services.ts), or start the local runtime, whose
 * registry of functions is per process; two of them in one worker would see each other's. A folder entry means every
 * file under it; a file entry is itself. vitest.config.mts and test/support/freshModules.ts both read this list.
 */
export const FRESH_MODULES = [
  "test/functions/",
  "test/intake/",
  "test/faults/queueMessages.test.ts",
  "test/faults/events.test.ts",
  "test/faults/http.test.ts",
  "test/local/appMetadata.test.ts",
];

/** Whether a test file (a path relative to the project's root, with forward slashes) needs a module graph of its own. */
export const needsFreshModules = (relativePath: string): boolean =>
  FRESH_MODULES.some((entry) => (entry.endsWith("/") ? relativePath.startsWith(entry) : relativePath === entry));
