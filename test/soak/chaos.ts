import type { JsonObject } from "../../sim";
import { addIpConfig, dropPool } from "../../sim/wire";
import { shuffled } from "../support/shuffle";
import type { Delivery } from "./delivery";
import type { Hosts, Proc } from "./hosts";
import { FLEX_KINDS, OTHER_KINDS, SIM_FAULT_KINDS, type FaultName, type SoakRun } from "./run";
import {
  FLEX,
  flexNics,
  OUTSIDE_POOL,
  OUTSIDE_SS,
  pId,
  POOLS,
  SCALE_SETS,
  ssId,
  SUBNET,
  type SoakWorld,
} from "./world";

// The chaos: steps chosen by the seeded PRNG until maxSteps or the deadline: declarations (some bad, some on the
// Flexible scale set), other writers (also on the Flexible scale set's NICs and capacity), the simulator's faults, an
// Azurite restart. Every fault kind is tried early, in a seeded order; then by weight. Returns the number of steps
// taken.

export async function runChaos(world: SoakWorld, run: SoakRun, hosts: Hosts, delivery: Delivery): Promise<number> {
  const { c, T } = world;
  const {
    opts,
    plan,
    latest,
    unsent,
    othersIpConfigs,
    othersTags,
    othersNicTags,
    expectedCapacity,
    deleted,
    badSent,
    simHandles,
    interleaves,
    nicInterleaves,
  } = run;
  const rand = run.rand;
  const pick = <T>(xs: readonly T[]): T => run.pick(xs);
  const chance = (p: number) => run.chance(p);
  const bump = (k: string, n = 1) => run.bump(k, n);
  const tryFault = (f: FaultName, target: string) => run.tryFault(f, target);
  const send = (m: unknown) => world.send(m);
  const sendRaw = (text: string) => world.sendRaw(text);
  const maxSteps = opts.maxSteps ?? 10_000;
  // From the chaos's start: the world's start-up (Azurite, the simulator, the hosts) takes seconds on a loaded machine.
  const deadline = Date.now() + opts.minutes * 60_000;
  const seq = { decl: 0, other: 0 };
  const declaredAtBase = Date.parse("2026-12-02T10:00:00Z");
  const live = () => SCALE_SETS.filter((s) => !deleted.has(ssId(s).toLowerCase()));

  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const liveInstances = (ss: string) =>
    c.instances(ss).filter((i) => String((i.properties as JsonObject).provisioningState) !== "Deleting");
  const instanceIdOf = (i: JsonObject) =>
    String((i as { instanceId?: unknown }).instanceId ?? String(i.name).split("_").pop());
  const vmIdOf = (i: JsonObject) => String((i.properties as JsonObject).vmId);
  /** An instance's incarnation: its ID and its vmId (a reborn instance has the ID of a dead one, never its vmId). */
  const incarnation = (i: JsonObject) => `${String(i.id)}|${vmIdOf(i)}`.toLowerCase();
  const addOthersIpConfig = (key: string, name: string) => {
    const set = othersIpConfigs.get(key) ?? new Set<string>();
    set.add(name);
    othersIpConfigs.set(key, set);
  };
  /** A control call the simulator may refuse for a while (409: another operation runs), retried ~5 s real. */
  const retrying = async (what: string, call: () => unknown): Promise<boolean> => {
    let last: unknown;
    for (let i = 0; i < 100; i++) {
      try {
        call();
        return true;
      } catch (err) {
        last = err;
      }
      await sleep(50);
    }
    bump("other:refused");
    plan.push(`  refused: ${what}: ${(last as Error)?.message?.slice(0, 120) ?? String(last)}`);
    return false;
  };
  /** Chaos that runs on beside the loop; the quiesce waits for it. */
  const later = (task: () => Promise<void>) => {
    run.background.push(
      task().catch((err: unknown) => {
        bump("chaos:error");
        plan.push(`  chaos error: ${(err as Error)?.message?.slice(0, 160) ?? String(err)}`);
      }),
    );
  };
  /** Capacity set by another writer; a scale-out's new instances are created at ETag "1" and move once on their own. */
  const scaleAs = (ss: string, capacity: number) => {
    const before = (c.resource(ss)?.sku as { capacity?: number } | undefined)?.capacity ?? 0;
    c.scale(ss, capacity);
    expectedCapacity.set(ss.toLowerCase(), capacity);
    if (capacity > before) tryFault("ETag drift with no write (a new instance's ETag moves after its create)", ss);
  };
  const whenInstanceWritten = (ss: string, hook: () => void) => {
    const key = ss.toLowerCase();
    run.onInstanceWrite.set(key, [...(run.onInstanceWrite.get(key) ?? []), hook]);
  };
  let slowUntil: number | undefined;
  const standardOps = () => c.configure({ scaleSetWriteMs: 3_000, instanceWriteMs: 3_000 });

  let flexDeclared = false;
  const declare = async (uniform = false) => {
    // The first declaration is a present on the Flexible scale set, so every run exercises its NIC path.
    const flex = !uniform && (!flexDeclared || chance(0.25));
    const ss = flex ? "flex-0" : pick(SCALE_SETS);
    const pool = pick(POOLS);
    const state = !flexDeclared || chance(0.7) ? "present" : "absent";
    flexDeclared = true;
    const requestId = `soak-${opts.seed}-${++seq.decl}`;
    const declaredAt = new Date(declaredAtBase + seq.decl * 1000).toISOString();
    const target = flex ? { targetId: FLEX } : { scaleSetId: ssId(ss) };
    const m = { v: 1, kind: "declare", ...target, backendPoolId: pId(pool), state, requestId, declaredAt };
    plan.push(`declare ${ss} ${pool} ${state}`);
    latest.set(`${ssId(ss)}|${pId(pool)}`.toLowerCase(), { state, requestId, declaredAt });
    await send(m);
  };

  const badMessage = async () => {
    const requestId = `soak-bad-${opts.seed}-${++seq.decl}`;
    const kind = pick(["outside-ss", "outside-pool", "garbage"] as const);
    plan.push(`bad ${kind}`);
    tryFault("bad message (out of scope, malformed)", "*");
    try {
      if (kind === "outside-ss") {
        await sendRaw(
          JSON.stringify({
            v: 1,
            kind: "declare",
            scaleSetId: OUTSIDE_SS,
            backendPoolId: pId("pool-0"),
            state: "present",
            requestId,
          }),
        );
        badSent.push({ requestId, reason: /^scaleSetId: .* is outside POOLSYNC_SCOPES$/ });
      } else if (kind === "outside-pool") {
        await sendRaw(
          JSON.stringify({
            v: 1,
            kind: "declare",
            scaleSetId: ssId(pick(SCALE_SETS)),
            backendPoolId: OUTSIDE_POOL,
            state: "present",
            requestId,
          }),
        );
        badSent.push({ requestId, reason: /^backendPoolId: .* is outside POOLSYNC_SCOPES$/ });
      } else {
        await sendRaw(`{"requestId":"${requestId}", not json`);
        badSent.push({ requestId, reason: /^message is not JSON$/ });
      }
    } catch {
      bump("producer:bad-send-failed");
    }
  };

  const otherMust: Array<(typeof OTHER_KINDS)[number]> = shuffled(OTHER_KINDS, rand);
  const otherWriter = () => {
    const names = live();
    if (names.length === 0) return;
    const ss = ssId(pick(names));
    const what = otherMust.shift() ?? pick(OTHER_KINDS);
    plan.push(`other ${what} ${ss.split("/").pop()}`);
    try {
      if (what === "ipconfig-model" || what === "ipconfig-instance") {
        const name = `other${++seq.other}`;
        // An instance's ip configuration belongs to its incarnation: a reborn instance under the same ID starts
        // from the model, without it.
        let target = ss;
        let key = ss.toLowerCase();
        if (what === "ipconfig-instance") {
          const insts = liveInstances(ss);
          if (insts.length === 0) return;
          const inst = pick(insts);
          target = String(inst.id);
          key = incarnation(inst);
        }
        c.write(target, addIpConfig(name, SUBNET));
        tryFault("another writer's ip configuration", ss);
        addOthersIpConfig(key, name);
      } else if (what === "tag") {
        const tag = `other${++seq.other}`;
        c.write(ss, (r) => {
          r.tags = { ...((r.tags as JsonObject | undefined) ?? {}), [tag]: "kept" };
        });
        const set = othersTags.get(ss.toLowerCase()) ?? new Set<string>();
        set.add(tag);
        othersTags.set(ss.toLowerCase(), set);
      } else if (what === "drop") {
        const pool = pId(pick(POOLS));
        const targets = [ss, ...c.instances(ss).map((i) => String(i.id))];
        c.write(pick(targets), dropPool(pool));
        tryFault("another writer drops our pool (drift)", ss);
      } else {
        const capacity = 1 + Math.floor(rand() * 4);
        scaleAs(ss, capacity);
        tryFault("scale out / in by another writer", ss);
      }
    } catch (err) {
      // The simulator refuses writes to a scale set being deleted: that is not a fault of ours.
      bump("other:refused");
      plan.push(`  refused: ${(err as Error).message.slice(0, 120)}`);
    }
  };

  // The Flexible scale set's other writers: on its VMs' NICs, and its capacity.
  const tagNic = (tag: string, nicIds?: Set<string>) => (r: JsonObject) => {
    r.tags = { ...((r.tags as JsonObject | undefined) ?? {}), [tag]: "kept" };
    nicIds?.add(String(r.id).toLowerCase());
  };
  const flexMust: Array<(typeof FLEX_KINDS)[number]> = shuffled(FLEX_KINDS, rand);
  const flexOther = () => {
    const what = flexMust.shift() ?? pick(FLEX_KINDS);
    plan.push(`flex ${what}`);
    try {
      const nics = flexNics(c);
      if (what === "scale") {
        const capacity = 1 + Math.floor(rand() * 3);
        scaleAs(FLEX, capacity);
        tryFault("Flexible: scale out / in by another writer", FLEX);
      } else if (nics.length === 0) {
        return;
      } else if (what === "tag") {
        const nic = pick(nics);
        const tag = `other${++seq.other}`;
        c.write(nic, tagNic(tag));
        const set = othersNicTags.get(nic.toLowerCase()) ?? new Set<string>();
        set.add(tag);
        othersNicTags.set(nic.toLowerCase(), set);
        tryFault("Flexible: another writer's NIC write (tag, or drops our pool)", FLEX);
      } else if (what === "drop") {
        const pool = pId(pick(POOLS)).toLowerCase();
        c.write(pick(nics), (r) => {
          for (const ipc of (
            r as unknown as {
              properties: {
                ipConfigurations: { properties: { loadBalancerBackendAddressPools?: { id: string }[] } }[];
              };
            }
          ).properties.ipConfigurations) {
            ipc.properties.loadBalancerBackendAddressPools = (
              ipc.properties.loadBalancerBackendAddressPools ?? []
            ).filter((p) => p.id.toLowerCase() !== pool);
          }
        });
        tryFault("Flexible: another writer's NIC write (tag, or drops our pool)", FLEX);
      } else {
        // A stale NIC PUT before each of our next few NIC writes: its tag must survive on every NIC it reached.
        const tag = `storm${++seq.other}`;
        const hit = new Set<string>();
        const times = 2 + Math.floor(rand() * 4);
        nicInterleaves.push({
          h: c.beforeNextWrite(/\/networkInterfaces\/flex-0-[^/]+$/i, tagNic(tag, hit), { times }),
          tag,
          nics: hit,
        });
        tryFault("Flexible: 412 storm on a NIC (interleaved stale NIC PUT)", FLEX);
      }
    } catch (err) {
      bump("other:refused");
      plan.push(`  refused: ${(err as Error).message.slice(0, 120)}`);
    }
  };

  // Every kind once early, in a seeded order (the scale set deletion last, so the others have targets); then by weight.
  const mustTry: Array<(typeof SIM_FAULT_KINDS)[number]> = shuffled(
    SIM_FAULT_KINDS.filter((k) => k !== "ss-delete"),
    rand,
  );
  mustTry.push("ss-delete");
  const owedAgain: Partial<Record<(typeof SIM_FAULT_KINDS)[number], number>> = {};
  const simFault = () => {
    const names = live();
    if (names.length === 0) return;
    const name = pick(names);
    const ss = ssId(name);
    const exact = `virtualMachineScaleSets/${name}$`;
    const instances = `virtualMachineScaleSets/${name}/virtualMachines/[^/]+$`;
    const fromMust = mustTry.length > 0;
    const kind = mustTry.shift() ?? pick(SIM_FAULT_KINDS);
    // A kind that finds nothing to act on (no live instance now) stays owed, before the scale set deletion.
    const notNow = () => {
      if (fromMust && (owedAgain[kind] = (owedAgain[kind] ?? 0) + 1) <= 5)
        mustTry.splice(mustTry.at(-1) === "ss-delete" ? mustTry.length - 1 : mustTry.length, 0, kind);
    };
    plan.push(`fault ${kind} ${name}`);
    const add = (f: FaultName, rule: Parameters<typeof c.injectFault>[0]) => {
      const times = rule.times ?? 1;
      simHandles.push({ f, h: c.injectFault(rule), times });
      tryFault(f, ss);
    };
    switch (kind) {
      case "412": {
        const times = 2 + Math.floor(rand() * 6);
        const tag = `storm${++seq.other}`;
        interleaves.push({
          h: c.beforeNextWrite(
            new RegExp(`${exact.replace("$", "")}$`, "i"),
            (r) => {
              r.tags = { ...((r.tags as JsonObject | undefined) ?? {}), [tag]: "kept" };
            },
            { times },
          ),
          times,
          ss,
          tag,
        });
        tryFault("412 storm (interleaved writer)", ss);
        break;
      }
      case "429":
        add("429 with long Retry-After", {
          method: "PUT",
          path: chance(0.5) ? exact : instances,
          retryAfterSeconds: 600 + Math.floor(rand() * 600),
        });
        break;
      case "409":
        add("409 concurrent operation", {
          method: "PUT",
          path: chance(0.5) ? exact : instances,
          status: 409,
          times: 1 + Math.floor(rand() * 2),
        });
        break;
      case "500":
        add("500 on a write", { method: "PUT", path: chance(0.5) ? exact : instances, status: 500 });
        break;
      case "503":
        add("503 on a read", {
          method: "GET",
          path: chance(0.5) ? exact : `virtualMachineScaleSets/${name}/virtualMachines$`,
          status: 503,
        });
        break;
      case "drop":
        add("dropped connection", {
          method: chance(0.5) ? "PUT" : "GET",
          path: chance(0.5) ? exact : instances,
          drop: true,
        });
        break;
      case "slow":
        // Longer than the 2 s (real) client timeout; the write still happens.
        add("slow answer past the client timeout, write happened", {
          method: "PUT",
          path: chance(0.5) ? exact : instances,
          afterWrite: true,
          delayMs: 3.5 * 1000 * T,
        });
        break;
      case "opfail":
        c.failNextOperation(new RegExp(`${exact.replace("$", "")}(/virtualMachines/[^/]+)?$`, "i"), { times: 1 });
        tryFault("operation ended Failed", ss);
        break;
      case "instance-delete": {
        const insts = c
          .instances(ss)
          .filter((i) => String((i.properties as JsonObject).provisioningState) !== "Deleting");
        if (insts.length === 0) return notNow();
        // CRP refuses a delete while another operation of the scale set runs (409): another writer tries again.
        const victim = String(pick(insts).id);
        tryFault("instance deleted", ss);
        later(async () => {
          if (await retrying(`delete ${victim}`, () => c.delete(victim)))
            expectedCapacity.set(ss.toLowerCase(), undefined);
        });
        break;
      }
      case "kill": {
        (hosts.procs[Math.floor(rand() * hosts.procs.length)] as Proc).killAfter = 1 + Math.floor(rand() * 4);
        tryFault("invocation killed mid-reconcile", "*");
        break;
      }
      case "scale-in-mid": {
        // Scale-in as our next write to one of its instances goes out: the reconcile's writes to the instances
        // leaving answer 400 "not an active instanceId" (or 409 "marked for deletion", as the run's coin says).
        const answer = chance(0.5) ? "notActive400" : "markedForDeletion409";
        tryFault(
          "scale-in during a reconcile (writes to a leaving instance: 400 not active / 409 marked for deletion)",
          ss,
        );
        whenInstanceWritten(ss, () =>
          later(async () => {
            c.configure({ deletingInstanceWrite: answer });
            const capacity = (c.resource(ss)?.sku as { capacity?: number } | undefined)?.capacity ?? 0;
            if (capacity < 1) return;
            const to = Math.max(0, capacity - 1 - Math.floor(rand() * 2));
            if (await retrying(`scale-in ${name} to ${to}`, () => scaleAs(ss, to))) {
              bump("chaos:scale-in-during-reconcile");
              plan.push(`  scale-in ${name} ${capacity} → ${to} during a reconcile (${answer})`);
            }
          }),
        );
        break;
      }
      case "reborn": {
        // An instance deleted, then a scale-out that takes its ID back (the lowest free one): a new incarnation at
        // ETag "1" that moves once by itself, and another writer's ip configuration on it, which poolsync's next
        // write must keep (a write computed from the dead incarnation's body would drop it).
        const insts = liveInstances(ss);
        if (insts.length === 0) return notNow();
        const victim = pick(insts);
        const before = new Set(c.instances(ss).map(vmIdOf));
        tryFault("scale-out reusing an instance ID (a reborn instance, another writer's ip configuration on it)", ss);
        later(async () => {
          if (!(await retrying(`delete ${String(victim.id)}`, () => c.delete(String(victim.id))))) return;
          expectedCapacity.set(ss.toLowerCase(), undefined);
          for (let i = 0; i < 200 && c.instances(ss).some((x) => vmIdOf(x) === vmIdOf(victim)); i++) await sleep(50);
          const capacity = ((c.resource(ss)?.sku as { capacity?: number } | undefined)?.capacity ?? 0) + 1;
          if (!(await retrying(`scale-out ${name} to ${capacity}`, () => scaleAs(ss, capacity)))) return;
          const born = c.instances(ss).filter((x) => !before.has(vmIdOf(x)));
          const reborn = born.find((x) => instanceIdOf(x) === instanceIdOf(victim)) ?? born[0];
          if (!reborn) return;
          if (instanceIdOf(reborn) === instanceIdOf(victim)) bump("chaos:instance-id-reused");
          const ipc = `other${++seq.other}`;
          if (
            await retrying(`ip configuration on ${String(reborn.id)}`, () =>
              c.write(String(reborn.id), addIpConfig(ipc, SUBNET)),
            )
          ) {
            addOthersIpConfig(incarnation(reborn), ipc);
            plan.push(`  ${String(reborn.name)} reborn (was vmId ${vmIdOf(victim)}), another writer's ${ipc} on it`);
          }
        });
        break;
      }
      case "cross": {
        // Another writer's scale-set-level write as our next instance write goes out: it waits for that write (409
        // across the scale set), then runs while our next instance writes arrive (409 across the scale set to them).
        tryFault("cross-instance conflict (another writer's scale-set operation during our instance writes)", ss);
        whenInstanceWritten(ss, () =>
          later(async () => {
            const tag = `cross${++seq.other}`;
            const wrote = await retrying(`tag ${tag} on ${name}`, () =>
              c.write(ss, (r) => {
                r.tags = { ...((r.tags as JsonObject | undefined) ?? {}), [tag]: "kept" };
              }),
            );
            if (!wrote) return;
            const set = othersTags.get(ss.toLowerCase()) ?? new Set<string>();
            set.add(tag);
            othersTags.set(ss.toLowerCase(), set);
            bump("chaos:cross-scale-set-write");
          }),
        );
        break;
      }
      case "slow-ops": {
        // The slow profile (OPERATION_PROFILES.slow) for a while: scale set and instance writes take 30 s.
        c.configure({ scaleSetWriteMs: 30_000, instanceWriteMs: 30_000 });
        slowUntil = Date.now() + (5 + rand() * 15) * 1000;
        tryFault("slow operations (scale set and instance writes take 30 s)", "*");
        break;
      }
      case "ss-delete": {
        // vmss-2 only, once, while the pipeline is busy with it (mid-reconcile, often mid-write).
        const victim = ssId("vmss-2");
        if (deleted.has(victim.toLowerCase())) return;
        deleted.add(victim.toLowerCase());
        tryFault("scale set deleted mid-run", victim);
        later(async () => {
          if (!(await retrying(`delete ${victim}`, () => c.delete(victim)))) deleted.delete(victim.toLowerCase());
        });
        break;
      }
    }
  };

  // Guarantee every fault kind early, in a seeded order; afterwards by weight.
  let azuriteRestarted = false;
  let steps = 0;
  try {
    for (; steps < maxSteps && Date.now() < deadline; steps++) {
      const r = rand();
      if (slowUntil !== undefined && Date.now() > slowUntil) {
        standardOps();
        slowUntil = undefined;
      }
      // Work from the first steps (a Flexible, then a Uniform declaration), so every fault has a reconcile to hit.
      if (steps < 2) await declare(steps === 1);
      else if (mustTry.length > 0 && (steps % 2 === 1 || (otherMust.length === 0 && flexMust.length === 0))) simFault();
      else if (otherMust.length > 0 && steps % 4 === 2) otherWriter();
      else if (flexMust.length > 0 && steps % 4 === 0) flexOther();
      else if (badSent.length === 0 && steps >= 20 && steps % 4 === 0) await badMessage();
      else if (r < 0.35) await declare();
      else if (r < 0.45) flexOther();
      else if (r < 0.55) otherWriter();
      else if (r < 0.85) simFault();
      else if (r < 0.9) await badMessage();
      else if (r < 0.93 || (!azuriteRestarted && steps > 12)) {
        plan.push("platform azurite-restart");
        tryFault("Azurite stopped and restarted", "*");
        azuriteRestarted = true;
        await world.restartAzurite();
      }
      // Producers retry what they could not send.
      while (unsent.length > 0 && !world.azuriteDown) {
        const m = unsent.shift();
        if (!(await send(m))) break;
      }
      await new Promise((res) => setTimeout(res, 80 + rand() * 120));
    }
  } finally {
    delivery.timerOn = false;
    // Hooks that never met a write lapse; what started runs to its end, then the standard profile again.
    run.onInstanceWrite.clear();
    for (let n = -1; n !== run.background.length;) {
      n = run.background.length;
      await Promise.all(run.background);
    }
    standardOps();
  }
  return steps;
}
