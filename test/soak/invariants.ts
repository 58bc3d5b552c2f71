import type { JsonObject } from "../../sim";
import { instanceNics, modelNics, nicPoolsByIpConfig, poolsByIpConfig } from "../../sim/wire";
import { decodeQueueBody } from "../support/queueBody";
import { scaleSetRef } from "../support/refs";
import type { Delivery } from "./delivery";
import type { Hosts } from "./hosts";
import type { SoakRun } from "./run";
import {
  FLEX,
  flexNics,
  OUTSIDE_POOL,
  OUTSIDE_SS,
  pId,
  POOLS,
  SCALE_SETS,
  ssId,
  VISIBILITY_S,
  type SoakWorld,
} from "./world";

/** What ARM answers a write to an instance that is leaving or gone. */
const GONE = /not an active Virtual Machine Scale Set VM instanceId|marked for deletion/i;

/**
 * The quiesce: faults off, every event delivered, the queue drained, and the timer shown everything expired,
 * round after round until it finds nothing to do. False when it never got there (an unbounded retry loop?).
 */
export async function quiesce(world: SoakWorld, run: SoakRun, delivery: Delivery): Promise<boolean> {
  const { c, config, queue, T } = world;
  const { simHandles, interleaves, nicInterleaves, fired, othersTags, othersNicTags, unsent } = run;
  const bump = (k: string, n = 1) => run.bump(k, n);
  const say = run.opts.log ?? (() => undefined);
  const send = (m: unknown) => world.send(m);
  for (const s of simHandles) fired.set(s.f, (fired.get(s.f) ?? 0) + (s.h.remaining() < s.times ? 1 : 0));
  // A storm's tag exists only if it was applied before one of our writes: only then must it survive.
  for (const { h, times, ss, tag } of interleaves) {
    h.cancel();
    if (h.applied() === 0) continue;
    fired.set(
      "412 storm (interleaved writer)",
      (fired.get("412 storm (interleaved writer)") ?? 0) + (h.applied() > 0 ? 1 : 0),
    );
    bump("412-storm:writes-interleaved", Math.min(h.applied(), times));
    const set = othersTags.get(ss.toLowerCase()) ?? new Set<string>();
    set.add(tag);
    othersTags.set(ss.toLowerCase(), set);
  }
  // Likewise a NIC storm's tag, on the NICs it was written on.
  for (const { h, tag, nics } of nicInterleaves) {
    h.cancel();
    if (nics.size === 0) continue;
    const storm = "Flexible: 412 storm on a NIC (interleaved stale NIC PUT)";
    fired.set(storm, (fired.get(storm) ?? 0) + 1);
    bump("flex-storm:nics-interleaved", nics.size);
    for (const nic of nics) {
      const set = othersNicTags.get(nic) ?? new Set<string>();
      set.add(tag);
      othersNicTags.set(nic, set);
    }
  }
  c.clearFaults();
  await world.ensureAzurite();
  for (let i = 0; unsent.length > 0 && i < 100; i++) await send(unsent.shift());

  let converged = false;
  const quiesceDeadline = Date.now() + 120_000;
  for (let round = 0; round < 8 && Date.now() < quiesceDeadline; round++) {
    c.settle();
    await delivery.deliverEvents(true);
    // Drain, waiting for invisible messages (Retry-After) up to their longest delay.
    const drainUntil = Date.now() + Math.ceil((1300 / T) * 1000) + VISIBILITY_S * 1000 + 5_000;
    for (;;) {
      const depth = (await queue.getProperties()).approximateMessagesCount ?? 0;
      if (depth === 0 && delivery.pendingEvents.length === 0) break;
      if (Date.now() > drainUntil || Date.now() > quiesceDeadline) break;
      await new Promise((r) => setTimeout(r, 100));
      c.settle();
      await delivery.deliverEvents(true);
    }
    // Every cached entry is now past its TTL and every failed declaration due for its retry.
    c.clock.advance(Math.max(config.cacheTtlMs, config.failedRetryMs) + 1_000);
    const s = await delivery.runTimer();
    const depth = (await queue.getProperties()).approximateMessagesCount ?? 0;
    say(
      `quiesce round ${round}: timer enqueued ${s?.enqueued ?? "?"}, queue depth ${depth}` +
        (s?.skippedUntil || s?.throttledUntil ? " (timer throttled: not a whole run)" : "") +
        (s?.failedVisits ? ` (${s.failedVisits} visits failed: not a whole run)` : ""),
    );
    // Only a whole run counts: one that waited out a Retry-After, paused at a 429 or went past a failed read did not
    // look at everything.
    const whole =
      s !== undefined && s.skippedUntil === undefined && s.throttledUntil === undefined && s.failedVisits === 0;
    if (s && whole && s.enqueued === 0 && depth === 0 && delivery.pendingEvents.length === 0) {
      converged = true;
      break;
    }
  }
  return converged;
}

/**
 * The invariants, checked on the end state: no request outside the scopes; other writers' changes survive; every
 * accepted declaration applied (model and every live instance; on the Flexible scale set, model and every live VM's
 * NIC) or visibly failed with a reason; every bad message poisoned with its reason. Returns the scale sets (lowercase
 * IDs, "*" = run-wide) a violation was found on.
 */
export async function checkInvariants(
  world: SoakWorld,
  run: SoakRun,
  hosts: Hosts,
  delivery: Delivery,
  converged: boolean,
): Promise<Set<string>> {
  const { c, config, poisonQueue } = world;
  const {
    violations,
    appErrors,
    counters,
    latest,
    othersIpConfigs,
    othersTags,
    othersNicTags,
    expectedCapacity,
    deleted,
    badSent,
  } = run;
  const bump = (k: string, n = 1) => run.bump(k, n);
  if (!converged)
    violations.push(
      "no convergence: the queue or the timer still had work after 8 quiesce rounds (unbounded retry loop?)",
    );
  if (delivery.maxAttemptSeen > config.maxAttempts + 1)
    violations.push(
      `a reconcile reached attempt ${delivery.maxAttemptSeen}, beyond POOLSYNC_MAX_ATTEMPTS ${config.maxAttempts}`,
    );

  const badTargets = new Set<string>();
  const violate = (target: string, what: string) => {
    badTargets.add(target.toLowerCase());
    violations.push(what);
  };

  // The poison queue, read first: a declaration that ended there is traced (with the reason, if poolsync gave one;
  // the platform's own poisoning after maxDequeueCount failures copies the message as it came, with none).
  const poisoned: Array<{ reason?: string; received?: string }> = [];
  for (let i = 0; i < 50; i++) {
    const got = await poisonQueue
      .receiveMessages({ numberOfMessages: 32, visibilityTimeout: 300 })
      .catch(() => undefined);
    if (!got || got.receivedMessageItems.length === 0) break;
    for (const m of got.receivedMessageItems) {
      const body = decodeQueueBody(m.messageText);
      const entry = (
        typeof body === "object" && body !== null && "received" in body ? body : { received: JSON.stringify(body) }
      ) as {
        reason?: string;
        received?: string;
      };
      poisoned.push(entry);
      const rid = /soak-\d+-\d+/.exec(typeof entry.received === "string" ? entry.received : "")?.[0];
      if (rid)
        run.note(
          rid,
          `in the poison queue ${entry.reason ? `with reason "${entry.reason}"` : "without a reason (the platform gave up on it)"}`,
        );
    }
  }
  // Which of the explanations a row that does not hold the newest accepted declaration fits: lost by storage (an
  // acknowledged write gone after an Azurite restart), poisoned, or lost by poolsync (its row written, then overtaken).
  const explain = (want: string, held: string | undefined): string => {
    const t = run.trace.get(want) ?? [];
    const h = held ? (run.trace.get(held) ?? []) : [];
    const seen = t.some((l) => / queue:/.test(l));
    const wrote = t.some((l) => / upsert (created|updated)/.test(l));
    const removed = t.some((l) => / timer removed its row \(finished absent\): removed/.test(l));
    const sent = t.some((l) => / sent as message /.test(l));
    const restarts = run.azuriteRestarts.map(
      (r) => `${(r.stopped / 1000).toFixed(2)}–${r.started !== undefined ? (r.started / 1000).toFixed(2) : "?"}s`,
    );
    const verdict = t.some((l) => / in the poison queue/.test(l))
      ? "(b) poisoned"
      : !sent
        ? "never sent"
        : !seen
          ? "(a?) sent but no handler ever saw it and it is not in the poison queue: the queue lost an acknowledged message"
          : !wrote
            ? "seen, but its upsert never created or updated the row"
            : removed
              ? "(c) its row was written, applied, removed by the timer as a finished absent, and then re-created by an older declaration"
              : "(a?/c) its row was written and later holds an older declaration: storage lost the write, or poolsync overwrote it";
    return (
      ` — ${verdict}; trace of ${want}: [${t.join("; ")}]` +
      (held ? `; trace of ${held}: [${h.slice(-8).join("; ")}]` : "") +
      `; Azurite restarts: ${restarts.length} [${restarts.slice(-60).join(", ")}]`
    );
  };

  // No write outside POOLSYNC_SCOPES, and nothing of the outside pool anywhere.
  const outside = c.stats(OUTSIDE_SS);
  if (outside.requests !== 0)
    violate("*", `${outside.requests} ARM requests reached ${OUTSIDE_SS}, outside POOLSYNC_SCOPES`);

  // Who wrote an instance, ARM's events (any writer) beside the app's own attempts: to tell a write that never came
  // from one that came and was undone.
  const writesOn = (instanceId: string) => {
    const id = instanceId.toLowerCase();
    const events = c
      .events()
      .filter((e) => e.data.resourceUri.toLowerCase() === id)
      .map(
        (e) =>
          `${e.eventTime} ${e.data.operationName.split("/").slice(-2).join("/")} ${e.data.status} by ${e.data.httpRequest?.clientRequestId ?? "-"}`,
      );
    const [ss, iid] = id.split("/virtualmachines/");
    const ours = run.writes.get(`${ss}|instance ${iid}`) ?? [];
    return `ARM events [${events.slice(-8).join("; ")}], our attempts [${ours.join("; ")}]`;
  };
  const svc = hosts.current.services;
  for (const name of SCALE_SETS) {
    const ss = ssId(name);
    const key = ss.toLowerCase();
    const rows = await svc.declarations.listForTarget(scaleSetRef(ss));
    const resource = c.resource(ss);
    // Judged by what ARM holds at the end: a delete whose operation ended Failed (an "operation ended Failed" fault
    // still pending on it) leaves the scale set in place, and its declarations must hold on it like any other's.
    if (deleted.has(key) && resource) bump("check:scale-set-delete-failed");
    if (!resource) {
      for (const d of rows) {
        if (!["target-deleted", "target-deleting", "failed"].includes(d.outcome.kind) || !d.outcome.reason)
          violate(
            ss,
            `${name} (deleted): declaration ${d.requestId} shows ${d.outcome.kind} without a reason naming the deletion`,
          );
      }
      continue;
    }
    // Other writers' changes survive.
    const tags = (resource.tags ?? {}) as Record<string, unknown>;
    bump("check:others-tags", othersTags.get(key)?.size ?? 0);
    bump("check:others-ipconfigs-model", othersIpConfigs.get(key)?.size ?? 0);
    for (const t of othersTags.get(key) ?? [])
      if (!(t in tags)) violate(ss, `${name}: lost update: another writer's tag ${t} is gone`);
    const modelIpcs = new Set(modelNics(resource).flatMap((n) => n.properties.ipConfigurations.map((i) => i.name)));
    for (const n of othersIpConfigs.get(key) ?? [])
      if (!modelIpcs.has(n))
        violate(ss, `${name}: lost update: another writer's ip configuration ${n} is gone from the model`);
    const cap = expectedCapacity.get(key);
    const sku = resource.sku as { capacity?: number } | undefined;
    if (cap !== undefined && sku?.capacity !== cap)
      violate(ss, `${name}: lost update: capacity ${sku?.capacity}, another writer set ${cap}`);
    const instances = c
      .instances(ss)
      .filter((i) => String((i.properties as JsonObject).provisioningState) !== "Deleting");
    for (const inst of instances) {
      // By incarnation: a reborn instance (an ID reused) answers for what was written on it, not on the dead one.
      const vmId = String((inst.properties as JsonObject).vmId);
      const mine = othersIpConfigs.get(`${String(inst.id)}|${vmId}`.toLowerCase()) ?? new Set<string>();
      const names = new Set(instanceNics(inst).flatMap((n) => n.properties.ipConfigurations.map((i) => i.name)));
      bump("check:others-ipconfigs-instance", mine.size);
      for (const n of mine)
        if (!names.has(n))
          violate(
            ss,
            `${inst.id} (vmId ${vmId}): lost update: another writer's ip configuration ${n} is gone; its writes: ${writesOn(String(inst.id))}`,
          );
    }
    // Every accepted declaration applied (model and every live instance) or visibly failed with a reason.
    const modelPools = new Set(poolsByIpConfig(modelNics(resource)).ipConfig0 ?? []);
    for (const pool of POOLS) {
      const want = latest.get(`${key}|${pId(pool)}`.toLowerCase());
      if (!want) continue;
      const row = rows.find(
        (d) => d.backendPoolId.toLowerCase() === pId(pool).toLowerCase() && d.ipConfiguration === "",
      );
      if (!row) {
        if (want.state === "absent" && !modelPools.has(pId(pool).toLowerCase())) {
          bump("check:declaration-absent-finished-and-removed");
          continue; // finished absent, removed by the timer
        }
        violate(
          ss,
          `${name} ${pool}: declaration ${want.requestId} (${want.state}) was accepted but no row holds it${explain(want.requestId, undefined)}`,
        );
        continue;
      }
      if (row.requestId !== want.requestId)
        violate(
          ss,
          `${name} ${pool}: row holds ${row.requestId}, the newest accepted is ${want.requestId}${explain(want.requestId, row.requestId)}`,
        );
      bump(`check:declaration-${row.outcome.kind}`);
      if (row.outcome.kind === "applied") {
        const onModel = modelPools.has(pId(pool).toLowerCase());
        if (onModel !== (want.state === "present"))
          violate(ss, `${name} ${pool}: shows applied (${want.state}) but the model ${onModel ? "has" : "lacks"} it`);
        for (const inst of instances) {
          const has = (poolsByIpConfig(instanceNics(inst)).ipConfig0 ?? []).includes(pId(pool).toLowerCase());
          if (has !== (want.state === "present")) {
            // What the app's cache believes about that instance, to tell a stale cache from a write that never came.
            const part = await svc.cache.readPartition(scaleSetRef(ss));
            const row = part.instances.get(
              String((inst as { instanceId?: unknown }).instanceId ?? String(inst.name).split("_").pop()),
            );
            const cachedHas = row?.model
              ? (poolsByIpConfig(row.model.nics as never).ipConfig0 ?? []).includes(pId(pool).toLowerCase())
              : undefined;
            violate(
              ss,
              `${name} ${pool}: shows applied (${want.state}) but instance ${String(inst.name)} ${has ? "has" : "lacks"} it ` +
                `(ARM: state ${String((inst.properties as JsonObject).provisioningState)}, etag ${String(inst.etag)}; cache: ${row ? `stale ${row.stale}, etag ${row.model?.etag}, has pool ${cachedHas}, pending ${row.pendingClientRequestId ?? "-"}` : "no row"})` +
                `; its writes: ${writesOn(String(inst.id))}`,
            );
          }
        }
      } else if (row.outcome.kind === "pending" || !row.outcome.reason) {
        violate(ss, `${name} ${pool}: declaration ${row.requestId} ends ${row.outcome.kind} with no reason`);
      } else if (GONE.test(row.outcome.reason)) {
        // An instance scaled in or being deleted is gone: skipped, never a failure of the declaration.
        violate(
          ss,
          `${name} ${pool}: declaration ${row.requestId} ends ${row.outcome.kind} on a gone instance: ${row.outcome.reason}`,
        );
      } else {
        bump(`final:${row.outcome.kind}`);
      }
    }
  }
  // The Flexible scale set: other writers' NIC changes and capacity survive; every applied declaration holds on the
  // model and on every live VM's NIC.
  {
    const rows = await svc.declarations.listForTarget(scaleSetRef(FLEX));
    const resource = c.resource(FLEX);
    const nics = flexNics(c);
    for (const [nic, tags] of othersNicTags) {
      const r = c.resource(nic);
      if (!r) continue; // scaled in with its VM
      bump("check:others-nic-tags", tags.size);
      for (const t of tags)
        if (!(t in ((r.tags ?? {}) as Record<string, unknown>)))
          violate(FLEX, `${nic}: lost update: another writer's tag ${t} is gone`);
    }
    const cap = expectedCapacity.get(FLEX.toLowerCase());
    const sku = resource?.sku as { capacity?: number } | undefined;
    if (cap !== undefined && sku?.capacity !== cap)
      violate(FLEX, `flex-0: lost update: capacity ${sku?.capacity}, another writer set ${cap}`);
    const modelPools = new Set(resource ? (poolsByIpConfig(modelNics(resource)).ipConfig0 ?? []) : []);
    const nicPools = nics.flatMap((nic) => {
      const r = c.resource(nic);
      return r ? [{ name: nic.split("/").pop(), pools: nicPoolsByIpConfig(r).ipConfig0 ?? [] }] : [];
    });
    // Where a pool is (model, every live VM's NIC) against where it should be; violations say which disagrees.
    const holds = (pool: string, present: boolean, what: string) => {
      const id = pId(pool).toLowerCase();
      const onModel = modelPools.has(id);
      if (onModel !== present) violate(FLEX, `flex-0 ${pool}: ${what} but the model ${onModel ? "has" : "lacks"} it`);
      for (const n of nicPools) {
        const has = n.pools.includes(id);
        if (has !== present) violate(FLEX, `flex-0 ${pool}: ${what} but NIC ${n.name} ${has ? "has" : "lacks"} it`);
      }
    };
    for (const pool of POOLS) {
      const want = latest.get(`${FLEX}|${pId(pool)}`.toLowerCase());
      if (!want) continue;
      const row = rows.find(
        (d) => d.backendPoolId.toLowerCase() === pId(pool).toLowerCase() && d.ipConfiguration === "",
      );
      if (!row) {
        if (want.state !== "absent")
          violate(
            FLEX,
            `flex-0 ${pool}: declaration ${want.requestId} (${want.state}) was accepted but no row holds it${explain(want.requestId, undefined)}`,
          );
        else {
          // Finished absent (applied everywhere), removed by the timer: nothing brings the pool back.
          bump("check:flex-declaration-absent-finished-and-removed");
          holds(pool, false, `declaration ${want.requestId} (absent) finished and was removed`);
        }
        continue;
      }
      bump(`check:flex-declaration-${row.outcome.kind}`);
      if (row.requestId !== want.requestId)
        violate(
          FLEX,
          `flex-0 ${pool}: row holds ${row.requestId}, the newest accepted is ${want.requestId}${explain(want.requestId, row.requestId)}`,
        );
      if (row.outcome.kind === "applied") holds(pool, want.state === "present", `shows applied (${want.state})`);
      else if (row.outcome.kind === "pending" || !row.outcome.reason)
        violate(FLEX, `flex-0 ${pool}: declaration ${row.requestId} ends ${row.outcome.kind} with no reason`);
      else bump(`final:flex-${row.outcome.kind}`);
    }
  }
  // Bad messages: each in the poison queue with its reason; nothing else poisoned but what the platform gave up on.
  for (const b of badSent) {
    const hit = poisoned.find((p) => typeof p.received === "string" && p.received.includes(b.requestId));
    if (!hit) violate("*", `bad message ${b.requestId} is not in the poison queue`);
    else if (!b.reason.test(hit.reason ?? ""))
      violate("*", `bad message ${b.requestId} poisoned with reason "${hit.reason}", wanted ${b.reason}`);
  }
  for (const p of poisoned) {
    if (typeof p.received === "string" && p.received.includes("soak-bad-")) continue;
    bump("poison:other");
  }
  for (const pool of c.poolMembers(OUTSIDE_POOL)) violate("*", `outside pool has member ${pool}`);
  if (appErrors.length > 0) counters["app-errors"] = appErrors.length;
  return badTargets;
}
