import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { QueueClient } from "@azure/storage-queue";
import { DEMO_SUBSCRIPTION, type JsonObject, type StatsCounters } from "../../sim";
import { addIpConfig, instanceNics, modelNics, poolsByIpConfig } from "../../sim/wire";
import { loadConfig } from "../../src/config";
import { TargetDeclarations } from "../../src/azure/targets/targetDeclarations";
import { targetStoreFromConfig } from "../../src/app/services";
import type { StoredDeclaration } from "../../src/core/declarations";
import { parseScaleSetId, type ScaleSetRef } from "../../src/core/resourceIds";
import { freePorts } from "../../devkit/freePorts";
import { resolveLocalOptions, UsageError } from "../stack/localOptions";
import { findAppDir } from "../host/appDir";
import { flexRace } from "./demoFlex";
import { startLocalStack, type LocalStack } from "../stack/stack";

/**
 * `npm run demo`: the classic lost-update race on the demo scale set, against an in-process local stack on ports
 * of its own (so it runs next to `npm run local`). Another writer adds ipConfig1 between poolsync's read and its
 * write; poolsync's If-Match write gets 412, it re-reads and retries; both changes survive. Then the pool is
 * declared absent, and ipConfig1 still survives. Exits 0 only if the end state is right.
 */

const RG = `/subscriptions/${DEMO_SUBSCRIPTION}/resourceGroups/etag`;
const SCALE_SET = `${RG}/providers/Microsoft.Compute/virtualMachineScaleSets/etag-k8s-mp-0`;
const POOL = `${RG}/providers/Microsoft.Network/loadBalancers/etag-k8s/backendAddressPools/etag-k8s`;
const SUBNET = `${RG}/providers/Microsoft.Network/virtualNetworks/etag-k8s-vnet/subnets/node-subnet`;
const INSTANCE_0 = `${SCALE_SET}/virtualMachines/0`;

const USAGE = `usage: npm run demo -- [--via auto|queue|api] [--flex] [--verbose]
  --via      how to declare: a message on the queue, PUT /api/memberships, or auto (the API when the app has it)
  --flex     the race on a NIC of the Flexible scale set etag-k8s-flex-0 instead of the Uniform one
  --verbose  also print poolsync's own JSON log lines`;

interface DemoFlags {
  via: "auto" | "queue" | "api";
  verbose: boolean;
  flex: boolean;
}

/** The demo's flags; an unknown flag, a missing value or a stray argument is a usage error. */
export function parseDemoFlags(argv: readonly string[]): DemoFlags & { help: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        via: { type: "string" },
        verbose: { type: "boolean" },
        flex: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${USAGE}`);
  }
  const via = values.via ?? "auto";
  if (via !== "auto" && via !== "queue" && via !== "api")
    throw new UsageError(`--via must be auto, queue or api, got ${JSON.stringify(via)}\n${USAGE}`);
  return { via, verbose: values.verbose === true, flex: values.flex === true, help: values.help === true };
}

const short = (id: string) =>
  id.replace(/^.*\/(virtualMachineScaleSets|loadBalancers)\//i, "").replace(/\/backendAddressPools\//i, "/");

/** What the app logs (JSON lines on stdout), told as a story. */
function narrate(entry: Record<string, unknown>, say: (line: string) => void): void {
  switch (entry.event) {
    case "arm.write": {
      const ok = entry.outcome === "ok";
      const raw = String(entry.outcome);
      const outcome = ok
        ? `ok, new ETag ${String(entry.etag)}`
        : raw.startsWith("PreconditionFailedError")
          ? "412 Precondition Failed: someone wrote since our read; re-read and retry"
          : raw.length > 140
            ? `${raw.slice(0, 140)}…`
            : raw;
      say(`    poolsync writes ${String(entry.target)} with If-Match ${String(entry.ifMatch)} → ${outcome}`);
      break;
    }
    case "reconcile":
      say(`    poolsync reconcile (${String(entry.trigger).slice(0, 60)}…) → ${String(entry.result)}`);
      break;
    case "event":
      say(
        `    ARM event ${String(entry.type).replace("Microsoft.Resources.", "")} on ${short(String(entry.resourceId))} → onResourceEvent: ${String(entry.outcome)}`,
      );
      break;
    case "message.poisoned":
    case "message.refused":
    case "reconcile.error":
      say(`    poolsync ${String(entry.event)}: ${String(entry.reason ?? entry.error)}`);
      break;
    default:
  }
}

function statsLine(s: StatsCounters): string {
  const reads = s.gets + s.instanceGets + s.lists + s.instanceLists;
  const writes = s.puts + s.patches + s.instancePuts;
  return (
    `${s.requests} ARM calls: ${reads} reads (GET model ${s.gets}, LIST instances ${s.instanceLists}, GET instance ${s.instanceGets}), ` +
    `${writes} writes (model ${s.puts + s.patches}, instances ${s.instancePuts}), ${s.operationGets} operation polls; ` +
    `412 Precondition Failed ×${s.status412}, 429 ×${s.status429}, 409 ×${s.status409}`
  );
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function runDemo(
  argv: readonly string[],
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<boolean> {
  const flags = parseDemoFlags(argv);
  if (flags.help) {
    out(USAGE);
    return true;
  }
  const appDir = findAppDir(__dirname);
  // The example's settings, never a developer's local.settings.json (which may point at real Azure), and no
  // environment overrides: the demo always plays against its own simulator.
  const example = JSON.parse(readFileSync(join(appDir, "local.settings.example.json"), "utf8")) as {
    Values: Record<string, string>;
  };
  const [blob, queue, table] = await freePorts(3);
  const opts = resolveLocalOptions(
    [
      "--port",
      "0",
      "--sim-port",
      "0",
      "--blob-port",
      String(blob),
      "--queue-port",
      String(queue),
      "--table-port",
      String(table),
      "--event-delay-ms",
      "200",
    ],
    {},
    {
      values: {
        ...example.Values,
        ARM_ENDPOINT: "https://127.0.0.1:0",
        POOLSYNC_EVENT_DEBOUNCE_SECONDS: "1",
        POOLSYNC_OPERATION_POLL_SECONDS: "0.25",
      },
      source: join(appDir, "local.settings.example.json"),
    },
    appDir,
  );

  // The app logs one JSON object per line on stdout: keep it for the story (and for --verbose), pass the rest.
  const appLog: Record<string, unknown>[] = [];
  const originalLog = console.log;
  console.log = (...args: unknown[]) => {
    const text = args.map(String).join(" ");
    if (text.startsWith("{")) {
      try {
        const entry = JSON.parse(text) as Record<string, unknown>;
        if (typeof entry.event === "string") {
          appLog.push(entry);
          if (flags.verbose) out(`      ${text}`);
          narrate(entry, out);
          return;
        }
      } catch {
        // not one of ours
      }
    }
    originalLog(...args);
  };

  const checks: { ok: boolean; what: string }[] = [];
  const check = (ok: boolean, what: string) => {
    checks.push({ ok, what });
    out(`  ${ok ? "✔" : "✘"} ${what}`);
  };

  let stack: LocalStack | undefined;
  try {
    out(
      `== poolsync demo: the lost-update race on ${flags.flex ? "a NIC of the Flexible scale set etag-k8s-flex-0" : "etag-k8s-mp-0"} ==`,
    );
    out("Starting an in-process local stack (Azurite, the ARM simulator, the Functions runtime) on ports of its own…");
    stack = await startLocalStack({
      ...opts,
      print: () => undefined,
      // The app's JSON lines come through each invocation's context: on to console.log, where the story reads them.
      log: (e) => (e.message.startsWith("{") ? console.log(e.message) : undefined),
      timerStatus: "memory",
      queues: { maxPollingIntervalMs: 500 },
    });
    for (const line of stack.summary()) out(`  ${line}`);
    const s = stack;
    const sim = s.simulator!.control;
    const config = loadConfig({ ...opts.settings, AzureWebJobsStorage: s.storageConnectionString });
    const declarations = new TargetDeclarations(targetStoreFromConfig(config));
    const workQueue = new QueueClient(s.storageConnectionString, config.queueName);
    const ref = parseScaleSetId(SCALE_SET);
    if (!ref.ok) throw new Error(ref.reason);
    const ss: ScaleSetRef = ref.value;

    const api = s.runtime.functions.find(
      (f) =>
        f.triggerType.toLowerCase() === "httptrigger" &&
        // The memberships function's route takes an optional action (…/memberships/move).
        /\/api\/memberships(\/\{action\?\})?$/.test(f.url ?? "") &&
        f.methods?.includes("PUT"),
    );
    const via = flags.via === "auto" ? (api ? "api" : "queue") : flags.via;
    if (via === "api" && !api) throw new Error("--via api: the app registers no PUT /api/memberships");

    const state = () => ({
      model: poolsByIpConfig(modelNics(sim.resource(SCALE_SET)!)),
      instances: sim.instances(SCALE_SET).map((vm) => poolsByIpConfig(instanceNics(vm as JsonObject))),
      members: sim.poolMembers(POOL).length,
    });
    const show = (label: string) => {
      const st = state();
      const fmt = (m: Record<string, string[]>) =>
        Object.entries(m)
          .map(([ip, pools]) => `${ip}→[${pools.map(short).join(",")}]`)
          .join(" ");
      out(
        `  ${label}: model ${fmt(st.model)}; ${st.instances.map((m, i) => `vm${i} ${fmt(m)}`).join("; ")}; pool ${short(POOL)} has ${st.members} member(s)`,
      );
      return st;
    };

    const declare = async (desired: "present" | "absent") => {
      const requestId = `demo-${desired}-${Date.now()}`;
      const body = { scaleSetId: SCALE_SET, backendPoolId: POOL, state: desired };
      if (via === "api") {
        const res = await fetch(`${s.runtime.url}/api/memberships`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        out(`  PUT /api/memberships ${JSON.stringify(body.state)} → ${res.status} ${text.slice(0, 160)}`);
        if (res.status !== 202) throw new Error(`PUT /api/memberships answered ${res.status}, not 202: ${text}`);
      } else {
        const message = { v: 1, kind: "declare", ...body, requestId, declaredAt: new Date().toISOString() };
        // The app makes its queue when it first runs; the demo may send before any function did.
        await workQueue.createIfNotExists();
        await workQueue.sendMessage(Buffer.from(JSON.stringify(message), "utf8").toString("base64"));
        out(`  queue ${config.queueName} ← ${JSON.stringify(message)}`);
      }
    };

    /** The declaration once poolsync is done with it: applied everywhere, or an outcome that is final. */
    const settled = async (desired: "present" | "absent"): Promise<StoredDeclaration> => {
      const mine = (rows: StoredDeclaration[]) =>
        rows.find((d) => d.backendPoolId.toLowerCase() === POOL.toLowerCase() && d.state === desired);
      const rows = await waitFor(
        `the ${desired} declaration to be applied everywhere`,
        () => declarations.listForTarget(ss),
        (found) => {
          const d = mine(found);
          // An absent is done when it holds everywhere (the reconcile marks it so, for the timer to remove it).
          return (
            d !== undefined &&
            d.outcome.kind !== "pending" &&
            (d.outcome.kind !== "applied" || desired === "present" || d.outcome.appliedEverywhere === true)
          );
        },
      );
      const d = mine(rows)!;
      out(
        `  declaration outcome: ${d.outcome.kind}${d.outcome.appliedEverywhere ? " everywhere" : ""}${d.outcome.reason ? ` (${d.outcome.reason})` : ""}`,
      );
      return d;
    };

    /** The local loop at rest: no event waiting or in flight, and the queue empty (in-flight messages count). */
    const quiet = async () => {
      let calm = 0;
      await waitFor(
        "the local loop to settle (events delivered, queue empty)",
        async () => {
          const props = await workQueue.getProperties();
          const busy = (s.forwarder?.stats.pending ?? 0) + (props.approximateMessagesCount ?? 0);
          calm = busy === 0 ? calm + 1 : 0;
          return calm;
        },
        (c) => c >= 4,
      );
    };

    if (flags.flex)
      await flexRace({
        sim,
        runtimeUrl: s.runtime.url,
        declarations,
        workQueue,
        queueName: config.queueName,
        via,
        out,
        check,
        quiet,
        appLog,
      });
    else await classicRace();

    async function classicRace(): Promise<void> {
      out("\n1. The world before: nobody is in the pool.");
      show("before");

      out(
        "\n2. Another writer (cluster tooling, a person with curl) will add ipConfig1 to the model and to instance 0,",
      );
      out("   each time just between poolsync's read and its write (the simulator's beforeNextWrite).");
      const raceModel = sim.beforeNextWrite(SCALE_SET, addIpConfig("ipConfig1", SUBNET));
      const raceVm0 = sim.beforeNextWrite(INSTANCE_0, addIpConfig("ipConfig1", SUBNET));
      sim.resetStats();

      out(
        `\n3. Declare pool etag-k8s present on etag-k8s-mp-0 (via ${via === "api" ? "PUT /api/memberships" : "a declare message on the queue"}).`,
      );
      await declare("present");
      const presentRow = await settled("present");
      await quiet();
      check(presentRow.outcome.kind === "applied", "the declaration is applied");
      const afterPresent = show("after");
      const presentStats = sim.stats(SCALE_SET);
      out(`  cost: ${statsLine(presentStats)}`);
      check(
        raceModel.applied() === 1 && raceVm0.applied() === 1,
        "the other writer's change landed between poolsync's read and write (model and instance 0)",
      );
      check(
        presentStats.status412 >= 2,
        `poolsync's stale If-Match writes were refused (412 ×${presentStats.status412}), it re-read and retried`,
      );
      check(
        JSON.stringify(afterPresent.model) === JSON.stringify({ ipConfig0: [POOL.toLowerCase()], ipConfig1: [] }),
        "model: our pool on ipConfig0 and the other writer's ipConfig1 both survive",
      );
      check(
        JSON.stringify(afterPresent.instances) ===
          JSON.stringify([{ ipConfig0: [POOL.toLowerCase()], ipConfig1: [] }, { ipConfig0: [POOL.toLowerCase()] }]),
        "instances: both in the pool, instance 0 keeps ipConfig1",
      );
      check(afterPresent.members === 2, "the load balancer's pool lists both instances");

      out("\n4. Declare the pool absent.");
      sim.resetStats();
      await declare("absent");
      const absentRow = await settled("absent");
      await quiet();
      check(absentRow.outcome.kind === "applied", "the declaration is applied everywhere");
      const afterAbsent = show("after");
      const absentStats = sim.stats(SCALE_SET);
      out(`  cost: ${statsLine(absentStats)}`);
      check(
        JSON.stringify(afterAbsent.model) === JSON.stringify({ ipConfig0: [], ipConfig1: [] }),
        "model: our pool is gone, ipConfig1 still survives",
      );
      check(
        JSON.stringify(afterAbsent.instances) === JSON.stringify([{ ipConfig0: [], ipConfig1: [] }, { ipConfig0: [] }]),
        "instances: out of the pool, instance 0 keeps ipConfig1",
      );
      check(afterAbsent.members === 0, "the load balancer's pool is empty");

      const events = appLog.filter((e) => e.event === "event");
      out(
        `\nEvents: ${s.forwarder?.stats.published ?? 0} ARM events published, ${s.forwarder?.stats.delivered ?? 0} delivered to onResourceEvent ` +
          `(${events.filter((e) => e.outcome === "own-write").length} recognised as poolsync's own writes, ${events.filter((e) => String(e.outcome).startsWith("invalidated")).length} invalidated the cache).`,
      );
      const poisoned = appLog.filter((e) => e.event === "message.poisoned" || e.event === "message.refused");
      check(poisoned.length === 0, "no message was poisoned");
    }
  } catch (err) {
    check(false, `the demo ran to the end: ${(err as Error)?.message ?? String(err)}`);
  } finally {
    await stack?.stop();
    console.log = originalLog;
  }
  const ok = checks.length > 0 && checks.every((c) => c.ok);
  out(
    ok
      ? "\nEnd state is right: no update was lost. (exit 0)"
      : `\nEnd state is WRONG: ${checks
          .filter((c) => !c.ok)
          .map((c) => c.what)
          .join("; ")} (exit 1)`,
  );
  return ok;
}

if (require.main === module) {
  runDemo(process.argv.slice(2)).then(
    (ok) => process.exit(ok ? 0 : 1),
    (err: unknown) => {
      console.error(err instanceof UsageError ? err.message : ((err as Error)?.stack ?? String(err)));
      process.exit(err instanceof UsageError ? 2 : 1);
    },
  );
}
