// `npm run smoke -- --url <app url> --scale-set <id>`: after a deployment, checks what only a live app can show.
//   1. an unauthenticated call is refused (401);
//   2. an authenticated status call answers (200, JSON);
//   3. an ARM event reaches onResourceEvent: a tag written on the named scale set shows in the status within --timeout
//      seconds: in that scale set's view (its cached model marked stale or re-read) when poolsync holds it, else in
//      the status's tally of events about resources poolsync holds nothing for (such an event makes no row).
// In Azure the API token is $POOLSYNC_TOKEN (az account get-access-token --resource api://<authClientId>) and the ARM
// token $ARM_TOKEN (az account get-access-token); against `npm run local` (POOLSYNC_AUTH=entra) the caller is the
// local stand-in's test principal and ARM is the simulator.
import { readFileSync } from "node:fs";
import { request } from "node:https";
import { parseArgs } from "node:util";

export const SMOKE_USAGE = `usage: npm run smoke -- --url <app url> --scale-set <scale set resource id> [options]
  --url URL            the Function App (https://<app>.azurewebsites.net, or http://127.0.0.1:7071 for npm run local)
  --scale-set ID       a scale set poolsync may see: the smoke test writes the tag poolsync-smoke on it
  --arm-endpoint URL   ARM (default https://management.azure.com; the simulator's URL locally)
  --arm-ca FILE        a CA to trust for ARM (the simulator's sim/tls/cert.pem)
  --test-principal     authenticate as npm run local's test principal instead of with $POOLSYNC_TOKEN
  --timeout SECONDS    how long the event may take to show (default 60)
Environment: POOLSYNC_TOKEN (bearer token for the app), ARM_TOKEN (bearer token for ARM).`;

export interface SmokeOptions {
  url: string;
  scaleSetId: string;
  armEndpoint: string;
  armCa?: string;
  armToken: string;
  /** How the authenticated calls prove who they are. */
  auth: { kind: "bearer"; token: string } | { kind: "test-principal" };
  timeoutMs: number;
  pollMs?: number;
  print?: (line: string) => void;
}

export class SmokeFailure extends Error {
  override name = "SmokeFailure";
}

const SCALE_SET_API_VERSION = "2024-07-01";
const TEST_PRINCIPAL = JSON.stringify({ id: "poolsync-smoke", name: "poolsync smoke test", roles: ["poolsync.Read"] });

export function parseSmokeArgs(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): SmokeOptions {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      url: { type: "string" },
      "scale-set": { type: "string" },
      "arm-endpoint": { type: "string" },
      "arm-ca": { type: "string" },
      "test-principal": { type: "boolean" },
      timeout: { type: "string" },
    },
    strict: true,
  });
  const fail = (why: string) => {
    throw new SmokeFailure(`${why}\n${SMOKE_USAGE}`);
  };
  if (!values.url) fail("--url is required");
  if (!values["scale-set"]) fail("--scale-set is required");
  if (
    !/^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/Microsoft\.Compute\/virtualMachineScaleSets\/[^/]+$/i.test(
      values["scale-set"] as string,
    )
  )
    fail(`--scale-set must be a scale set resource id, got "${values["scale-set"]}"`);
  const timeout = Number(values.timeout ?? "60");
  if (!Number.isFinite(timeout) || timeout <= 0)
    fail(`--timeout must be a positive number of seconds, got "${values.timeout}"`);
  const token = env.POOLSYNC_TOKEN;
  if (!values["test-principal"] && !token)
    fail("POOLSYNC_TOKEN is required (or --test-principal against npm run local)");
  return {
    url: (values.url as string).replace(/\/+$/, ""),
    scaleSetId: values["scale-set"] as string,
    armEndpoint: (values["arm-endpoint"] ?? "https://management.azure.com").replace(/\/+$/, ""),
    armCa: values["arm-ca"],
    armToken: env.ARM_TOKEN ?? "poolsync-smoke",
    auth: values["test-principal"] ? { kind: "test-principal" } : { kind: "bearer", token: token as string },
    timeoutMs: timeout * 1000,
  };
}

function authHeaders(auth: SmokeOptions["auth"]): Record<string, string> {
  return auth.kind === "bearer"
    ? { authorization: `Bearer ${auth.token}` }
    : { "x-test-client-principal": TEST_PRINCIPAL };
}

/** One ARM call over https, trusting `ca` when given (the simulator's self-signed certificate). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- ARM's JSON, read field by field with checks
function arm(o: SmokeOptions, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const url = new URL(`${o.armEndpoint}${path}?api-version=${SCALE_SET_API_VERSION}`);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        ca: o.armCa ? readFileSync(o.armCa) : undefined,
        headers: { authorization: `Bearer ${o.armToken}`, ...(payload ? { "content-type": "application/json" } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

interface ModelView {
  etag?: string;
  readAt?: string;
  stale: boolean;
  staleReason?: string;
}

interface UnheldView {
  at: string;
  resourceId: string;
  reason: string;
}

async function statusOf(o: SmokeOptions): Promise<{ status: number; model?: ModelView; unheld?: UnheldView[] }> {
  const res = await fetch(`${o.url}/api/status?format=json&scaleSetId=${encodeURIComponent(o.scaleSetId)}`, {
    headers: { accept: "application/json", ...authHeaders(o.auth) },
  });
  if (res.status !== 200) return { status: res.status };
  const report = (await res.json()) as {
    scaleSets?: { scaleSetId: string; model: ModelView }[];
    events?: { recent?: UnheldView[] };
  };
  const view = report.scaleSets?.find((s) => s.scaleSetId.toLowerCase() === o.scaleSetId.toLowerCase());
  return { status: 200, model: view?.model, unheld: report.events?.recent ?? [] };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSmoke(o: SmokeOptions): Promise<{ eventSeenAfterMs: number }> {
  const print = o.print ?? ((line: string) => console.log(line));

  const anonymous = await fetch(`${o.url}/api/status?format=json`, { headers: { accept: "application/json" } });
  await anonymous.arrayBuffer();
  if (anonymous.status !== 401)
    throw new SmokeFailure(`an unauthenticated GET /api/status answered ${anonymous.status}, not 401`);
  print("ok   unauthenticated GET /api/status → 401");

  const before = await statusOf(o);
  if (before.status !== 200)
    throw new SmokeFailure(`an authenticated GET /api/status answered ${before.status}, not 200`);
  print("ok   authenticated GET /api/status → 200");

  const read = await arm(o, "GET", o.scaleSetId);
  if (read.status !== 200) throw new SmokeFailure(`GET ${o.scaleSetId} from ARM answered ${read.status}`);
  const tags = { ...(read.json?.tags ?? {}), "poolsync-smoke": new Date().toISOString() };
  const started = Date.now();
  const write = await arm(o, "PATCH", o.scaleSetId, { tags });
  if (write.status !== 200 && write.status !== 202)
    throw new SmokeFailure(`PATCH tags of ${o.scaleSetId} answered ${write.status}`);
  print(`..   tag poolsync-smoke written on ${o.scaleSetId} (${write.status}); waiting for its event in the status`);

  const seen = (m: ModelView | undefined) =>
    m !== undefined &&
    JSON.stringify(m) !== JSON.stringify(before.model) &&
    (m.etag !== before.model?.etag || (m.stale && /event/i.test(m.staleReason ?? "")));
  // An event poolsync held nothing for is tallied instead; one counted since the write, for this scale set.
  const tallied = (list: UnheldView[] | undefined) =>
    list?.find(
      (u) =>
        u.resourceId.toLowerCase() === o.scaleSetId.toLowerCase() &&
        !(before.unheld ?? []).some((b) => b.at === u.at && b.reason === u.reason),
    );
  while (Date.now() - started < o.timeoutMs) {
    const now = await statusOf(o);
    const counted = tallied(now.unheld);
    if (counted) {
      const ms = Date.now() - started;
      print(
        `ok   the ARM event reached onResourceEvent: the status counts it among events about resources poolsync holds nothing for (${counted.reason}) after ${(ms / 1000).toFixed(1)} s`,
      );
      return { eventSeenAfterMs: ms };
    }
    if (seen(now.model)) {
      const ms = Date.now() - started;
      print(
        `ok   the ARM event reached onResourceEvent: the status shows the scale set ${now.model?.stale ? `stale (${now.model.staleReason})` : "re-read"} after ${(ms / 1000).toFixed(1)} s`,
      );
      return { eventSeenAfterMs: ms };
    }
    await sleep(o.pollMs ?? 1000);
  }
  throw new SmokeFailure(
    `no sign of the tag write's event in the status of ${o.scaleSetId} within ${o.timeoutMs / 1000} s (is the Event Grid subscription on?)`,
  );
}

if (require.main === module) {
  Promise.resolve()
    .then(() => runSmoke(parseSmokeArgs(process.argv.slice(2), process.env)))
    .then(
      () => console.log("smoke test passed"),
      (e: unknown) => {
        console.error(e instanceof Error ? e.message : e);
        process.exit(1);
      },
    );
}
