import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startIntakeApp, type IntakeApp } from "./support";

/**
 * A weak POOLSYNC_CACHE_KEY across the real edge: the local runtime starts the built app with it, and the first
 * invocation, where the app loads its settings, fails with the error that names the setting and why (the host logs
 * it), never with the key in it, and nothing is served on a key anyone could guess.
 */

const WEAK = "changeme-changeme-changeme-changeme";
const hostErrors: string[] = [];
const original = console.error;
let app: IntakeApp;

beforeAll(async () => {
  // The runtime reports a failed invocation on console.error, as the host logs it.
  console.error = (...args: unknown[]) => void hostErrors.push(args.map(String).join(" "));
  app = await startIntakeApp({ env: { POOLSYNC_CACHE_KEY: WEAK } });
});
afterAll(async () => {
  await app?.stop();
  console.error = original;
});

describe("a weak cache key", () => {
  it("is refused where the settings are loaded: the call fails, and the error names POOLSYNC_CACHE_KEY and why", async () => {
    const res = await fetch(`${app.url}/api/status`);
    expect(res.status).toBe(500);
    const logged = hostErrors.join("\n");
    expect(logged).toContain(
      '- POOLSYNC_CACHE_KEY is weak: it looks like a placeholder (it contains "changeme"), not a random key; use at least 32 random characters',
    );
    expect(logged).not.toContain(WEAK);
  });
});
