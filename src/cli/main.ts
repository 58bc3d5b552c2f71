#!/usr/bin/env node
import { parseArgs } from "node:util";
import type { Accepted } from "../intake/acceptDeclaration";
import type { ScaleSetView } from "../intake/observedState";
import type { StatusReport } from "../intake/statusReport";
import { ApiError, callApi, UnreachableError, type ClientOptions } from "./client";
import { formatDryRun, formatPlan } from "./planText";
import { formatAccepted, formatMoved, formatPoison, formatScaleSetView, formatStatus } from "./format";
import { jsonForTerminal, terminalSafe, terminalSafeJson } from "./terminalText";

/**
 * `poolsync declare|status|poison`: a thin client of the HTTP API (docs/api.md), so it works against any deployment.
 */

export const EXIT = { ok: 0, apiError: 1, usage: 2, unreachable: 3 } as const;

export const USAGE = `usage: poolsync <command> [options]

commands:
  declare --scale-set ID|--target ID --pool ID --state present|absent [--ip-configuration NAME|--ip-version IPv4|IPv6]
          [--admin-state None|Up|Down [--instances 3,7]]
                      declare a scale set's or a VM's membership in a pool: a load balancer backend pool (NIC- or
                      IP-based), an inbound NAT pool or an application gateway pool (PUT /api/memberships);
                      --admin-state: the members' admin state in an IP-based pool (--instances: only these);
                      --dry-run: what it would store and write, storing and writing nothing
  move --scale-set ID|--target ID --from POOL --to POOL [--ip-configuration NAME|--ip-version IPv4|IPv6]
                      leave one pool for another in one write per resource (PUT /api/memberships/move)
  plan TARGET_ID      what a reconcile of the scale set or VM would write now (GET /api/plan)
  status [--scale-set ID|--target ID]
                      counts and declared vs observed (GET /api/status, or GET /api/memberships for one target)
  poison              list the poison queue's messages with their reasons (GET /api/status?poison=1)

options:
  --url URL           the function app (default $POOLSYNC_URL, else http://127.0.0.1:7071)
  --token TOKEN       Entra access token for the app (az account get-access-token --resource api://<client id>),
                      sent as Authorization: Bearer (default $POOLSYNC_TOKEN)
  --key KEY           function key, the fallback (POOLSYNC_AUTH=key), sent as x-functions-key (default $POOLSYNC_KEY)
  --json              print the API's JSON answer as is
  -h, --help          this text

exit codes: 0 done, 1 the API refused or failed, 2 bad usage, 3 cannot reach the app`;

export interface Io {
  out(text: string): void;
  err(text: string): void;
  env: Record<string, string | undefined>;
  fetch?: typeof fetch;
}

class UsageError extends Error {}

const OPTIONS = {
  url: { type: "string" },
  key: { type: "string" },
  token: { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  "scale-set": { type: "string" },
  target: { type: "string" },
  "ip-version": { type: "string" },
  pool: { type: "string" },
  "ip-configuration": { type: "string" },
  state: { type: "string" },
  "dry-run": { type: "boolean" },
  "admin-state": { type: "string" },
  instances: { type: "string" },
  from: { type: "string" },
  to: { type: "string" },
} as const;

const ALLOWED: Record<string, readonly string[]> = {
  declare: [
    "scale-set",
    "target",
    "pool",
    "ip-configuration",
    "ip-version",
    "state",
    "dry-run",
    "admin-state",
    "instances",
  ],
  move: ["scale-set", "target", "from", "to", "ip-configuration", "ip-version"],
  plan: [],
  status: ["scale-set", "target"],
  poison: [],
};

function parse(argv: string[]) {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

/** Long: the CLI's one dispatch over its commands and their flags; each command's work is in its own module. */
export async function main(argv: string[], io: Io): Promise<number> {
  let args;
  try {
    args = parse(argv);
  } catch (err) {
    io.err(`poolsync: ${terminalSafe((err as Error).message)}\n\n${USAGE}`);
    return EXIT.usage;
  }
  const { values, positionals } = args;
  const command = positionals[0];
  if (values.help || command === "help") {
    io.out(USAGE);
    return EXIT.ok;
  }
  try {
    if (command === undefined) throw new UsageError("no command given");
    const allowed = ALLOWED[command];
    if (!allowed) throw new UsageError(`unknown command "${command}"`);
    const takes = command === "plan" ? 2 : 1;
    if (positionals.length > takes) throw new UsageError(`unexpected argument "${positionals[takes]}"`);
    const misplaced = (
      ["scale-set", "pool", "ip-configuration", "state", "admin-state", "instances", "from", "to"] as const
    ).filter((o) => values[o] !== undefined && !allowed.includes(o));
    if (misplaced.length > 0) throw new UsageError(`${command} takes no --${misplaced[0]}`);
    const client: ClientOptions = {
      url: values.url ?? io.env.POOLSYNC_URL ?? "http://127.0.0.1:7071",
      ...((values.key ?? io.env.POOLSYNC_KEY) ? { key: values.key ?? io.env.POOLSYNC_KEY } : {}),
      ...((values.token ?? io.env.POOLSYNC_TOKEN) ? { token: values.token ?? io.env.POOLSYNC_TOKEN } : {}),
      ...(io.fetch ? { fetch: io.fetch } : {}),
    };
    try {
      new URL(client.url);
    } catch {
      throw new UsageError(`--url "${client.url}" is not a URL`);
    }
    // Whatever the API answers is someone else's text: printed inert (src/cli/terminalText.ts).
    const print = <T>(json: T, text: (safe: T) => string, asJson: unknown = json) =>
      io.out(values.json ? jsonForTerminal(asJson) : text(terminalSafeJson(json)));

    if (command === "declare") {
      const scaleSetId = values["scale-set"];
      const targetId = values.target;
      const backendPoolId = values.pool;
      const state = values.state;
      if (!scaleSetId && !targetId) throw new UsageError("declare needs --scale-set ID or --target ID");
      if (!backendPoolId) throw new UsageError("declare needs --pool ID");
      if (state !== "present" && state !== "absent")
        throw new UsageError(`declare needs --state present or --state absent${state ? `, not "${state}"` : ""}`);
      const body = {
        ...(targetId ? { targetId } : { scaleSetId }),
        backendPoolId,
        state,
        ...(values["ip-configuration"] ? { ipConfiguration: values["ip-configuration"] } : {}),
        ...(values["ip-version"] ? { ipVersion: values["ip-version"] } : {}),
        ...(values["admin-state"] ? { adminState: values["admin-state"] } : {}),
        ...(values.instances ? { instances: values.instances.split(",").map((i) => i.trim()) } : {}),
      };
      if (values["dry-run"]) {
        const dry = (await callApi(client, "PUT", "api/memberships?dryRun=true", body)) as Parameters<
          typeof formatDryRun
        >[0];
        print(dry, formatDryRun);
        return EXIT.ok;
      }
      const accepted = (await callApi(client, "PUT", "api/memberships", body)) as Accepted;
      print(accepted, formatAccepted);
    } else if (command === "move") {
      const scaleSetId = values["scale-set"];
      const targetId = values.target;
      if (!scaleSetId && !targetId) throw new UsageError("move needs --scale-set ID or --target ID");
      if (!values.from || !values.to) throw new UsageError("move needs --from POOL and --to POOL");
      const body = {
        ...(targetId ? { targetId } : { scaleSetId }),
        from: values.from,
        to: values.to,
        ...(values["ip-configuration"] ? { ipConfiguration: values["ip-configuration"] } : {}),
        ...(values["ip-version"] ? { ipVersion: values["ip-version"] } : {}),
      };
      const moved = (await callApi(client, "PUT", "api/memberships/move", body)) as Parameters<typeof formatMoved>[0];
      print(moved, formatMoved);
    } else if (command === "plan") {
      const targetId = positionals[1];
      if (!targetId) throw new UsageError("plan needs a target ID (a scale set or VM)");
      const plan = (await callApi(client, "GET", `api/plan?targetId=${encodeURIComponent(targetId)}`)) as Parameters<
        typeof formatPlan
      >[0];
      print(plan, formatPlan);
    } else if (command === "status") {
      const scaleSetId = values["scale-set"];
      const targetId = values.target;
      if (scaleSetId !== undefined || targetId !== undefined) {
        const query =
          targetId !== undefined
            ? `targetId=${encodeURIComponent(targetId)}`
            : `scaleSetId=${encodeURIComponent(scaleSetId ?? "")}`;
        const view = (await callApi(client, "GET", `api/memberships?${query}`)) as ScaleSetView;
        print(view, formatScaleSetView);
      } else {
        const report = (await callApi(client, "GET", "api/status")) as StatusReport;
        print(report, formatStatus);
      }
    } else {
      const report = (await callApi(client, "GET", "api/status?poison=1")) as StatusReport;
      print(report, (r) => formatPoison(r.queue.poisonName, r.poison ?? [], r.queue.poison), report.poison ?? []);
    }
    return EXIT.ok;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`poolsync: ${terminalSafe(err.message)}\n\n${USAGE}`);
      return EXIT.usage;
    }
    if (err instanceof ApiError) {
      io.err(`poolsync: ${err.status} ${terminalSafe(err.code)}: ${terminalSafe(err.message)}`);
      return EXIT.apiError;
    }
    if (err instanceof UnreachableError) {
      io.err(`poolsync: ${terminalSafe(err.message)}`);
      return EXIT.unreachable;
    }
    throw err;
  }
}

if (require.main === module) {
  main(process.argv.slice(2), { out: (t) => console.log(t), err: (t) => console.error(t), env: process.env }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      console.error(`poolsync: unexpected error: ${(err as Error)?.stack ?? String(err)}`);
      process.exitCode = 70;
    },
  );
}
