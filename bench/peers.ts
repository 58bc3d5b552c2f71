// The strategies poolsync's peers use, over the real ComputeManagementClient against the same simulator.
//  - last-writer-wins: GET, edit, PUT without If-Match (Terraform azurerm, Pulumi azure-native, Azure Service
// Operator).
//  - get-then-put-if-match: GET before every write, If-Match, no cache kept across writes or a 412, one write per
//    change, and on 429 every call waits until Retry-After has passed (cloud-provider-azure).
// Both apply each change on its own: the model first, then every instance (one PUT each), as cloud-provider-azure
// does for a VMSS backend pool change.
import {
  ComputeManagementClient,
  type VirtualMachineScaleSet,
  type VirtualMachineScaleSetVM,
} from "@azure/arm-compute";
import { createDefaultHttpClient, createPipelineRequest, isRestError } from "@azure/core-rest-pipeline";
import { ARM_SCOPE, staticTokenCredential } from "../sim/client";
import type { ArmSimulator } from "../sim";
import { IP_CONFIG, type Change } from "./world";

export type PeerKind = "last-writer-wins" | "get-then-put-if-match";

export interface StrategyRun {
  /** Hands over one change (the caller decides when: its arrival time). */
  submit(c: Change): Promise<void>;
  /** Resolves when everything submitted so far has been worked off. */
  idle(): Promise<void>;
  close(): Promise<void>;
  /** Counters of the strategy's own (beyond what the simulator counts). */
  own(): Record<string, number>;
}

type Nics = NonNullable<
  NonNullable<VirtualMachineScaleSet["virtualMachineProfile"]>["networkProfile"]
>["networkInterfaceConfigurations"];

/** Adds or removes the pool on ipConfig0 of the first NIC; false when it already is as wanted. */
function edit(nics: Nics, c: Change): boolean {
  const ipc = nics?.[0]?.ipConfigurations?.find((i) => i.name === IP_CONFIG);
  if (!ipc) return false;
  const pools = ipc.loadBalancerBackendAddressPools ?? [];
  const has = pools.some((p) => (p.id ?? "").toLowerCase() === c.poolId.toLowerCase());
  if ((c.state === "present") === has) return false;
  ipc.loadBalancerBackendAddressPools =
    c.state === "present"
      ? [...pools, { id: c.poolId }]
      : pools.filter((p) => (p.id ?? "").toLowerCase() !== c.poolId.toLowerCase());
  return true;
}

function parts(id: string): { sub: string; rg: string; name: string } {
  const p = id.split("/");
  return { sub: p[2] ?? "", rg: p[4] ?? "", name: p[8] ?? "" };
}

export interface PeerOptions {
  /** Changes worked on at once (each a GET-edit-PUT chain). */
  concurrency: number;
  /** Instance writes in flight at once within one change. */
  instanceConcurrency: number;
  /** Polling interval of long-running operations, simulated ms. */
  pollMs: number;
}

export function startPeer(kind: PeerKind, sim: ArmSimulator, opts: PeerOptions): StrategyRun {
  const clock = sim.control.clock;
  const clients = new Map<string, ComputeManagementClient>();
  const httpClient = createDefaultHttpClient();
  const client = (sub: string) => {
    let c = clients.get(sub);
    if (!c) {
      c = new ComputeManagementClient(staticTokenCredential(`peer-${kind}`), sub, {
        endpoint: sim.url,
        credentials: { scopes: [ARM_SCOPE] },
        ...(sim.ca ? { tlsOptions: { ca: sim.ca } } : {}),
        // The SDK's own retry would sleep a 429's Retry-After in real seconds; the peers wait in simulated time.
        retryOptions: { maxRetries: 0 },
      });
      clients.set(sub, c);
    }
    return c;
  };
  const counters = { changes: 0, retries412: 0, waits429: 0, waited429Ms: 0, errors: 0 };
  // cloud-provider-azure: after a 429 nothing is sent until Retry-After has passed (per client, so per subscription).
  const blockedUntil = new Map<string, number>();

  async function call<T>(sub: string, fn: () => Promise<T>): Promise<T> {
    for (;;) {
      const until = blockedUntil.get(sub) ?? 0;
      if (until > clock.now()) await clock.sleep(until - clock.now());
      try {
        return await fn();
      } catch (err) {
        if (isRestError(err) && err.statusCode === 429) {
          const ms = Number(err.response?.headers.get("retry-after") ?? "1") * 1000;
          counters.waits429++;
          counters.waited429Ms += ms;
          if (kind === "get-then-put-if-match")
            blockedUntil.set(sub, Math.max(blockedUntil.get(sub) ?? 0, clock.now() + ms));
          else await clock.sleep(ms); // go-autorest: this request sleeps Retry-After and is sent again
          continue;
        }
        if (isRestError(err) && err.statusCode === 409) {
          await clock.sleep(Number(err.response?.headers.get("retry-after") ?? "5") * 1000);
          continue;
        }
        throw err;
      }
    }
  }

  async function waitOperation(
    sub: string,
    headers: { get(n: string): string | undefined | null } | undefined,
  ): Promise<void> {
    const url = headers?.get("azure-asyncoperation") ?? headers?.get("location");
    if (!url) return;
    for (;;) {
      await clock.sleep(opts.pollMs);
      const r = await client(sub)
        .pipeline.sendRequest(httpClient, createPipelineRequest({ url, method: "GET" }))
        .catch(() => undefined);
      if (r?.status === 429) {
        counters.waits429++;
        await clock.sleep(Number(r.headers.get("retry-after") ?? "1") * 1000);
        continue;
      }
      const status = r ? ((JSON.parse(r.bodyAsText ?? "{}") as { status?: string }).status ?? "") : "";
      if (/succeeded|failed|canceled/i.test(status)) return;
    }
  }

  async function applyModel(c: Change): Promise<void> {
    const { sub, rg, name } = parts(c.scaleSetId);
    const cc = client(sub);
    for (;;) {
      const vmss = await call(sub, () => cc.virtualMachineScaleSets.get(rg, name));
      const nics = vmss.virtualMachineProfile?.networkProfile?.networkInterfaceConfigurations;
      if (!edit(nics, c)) return;
      let headers: { get(n: string): string | undefined | null } | undefined;
      try {
        await call(sub, () =>
          cc.virtualMachineScaleSets
            .createOrUpdate(
              rg,
              name,
              {
                location: vmss.location,
                virtualMachineProfile: { networkProfile: { networkInterfaceConfigurations: nics } },
              } as VirtualMachineScaleSet,
              {
                ...(kind === "get-then-put-if-match" ? { ifMatch: vmss.etag } : {}),
                onResponse: (r) => (headers = r.headers),
              },
            )
            .submitted(),
        );
      } catch (err) {
        if (isRestError(err) && err.statusCode === 412) {
          counters.retries412++;
          continue; // drop what we read, GET again
        }
        throw err;
      }
      await waitOperation(sub, headers);
      return;
    }
  }

  async function applyInstance(c: Change, vm: VirtualMachineScaleSetVM): Promise<void> {
    const { sub, rg, name } = parts(c.scaleSetId);
    const cc = client(sub);
    const instanceId = vm.instanceId ?? "";
    let current: VirtualMachineScaleSetVM | undefined = kind === "last-writer-wins" ? vm : undefined;
    for (;;) {
      current ??= await call(sub, () => cc.virtualMachineScaleSetVMs.get(rg, name, instanceId));
      const nics = current.networkProfileConfiguration?.networkInterfaceConfigurations;
      if (!edit(nics, c)) return;
      let headers: { get(n: string): string | undefined | null } | undefined;
      const etag = current.etag;
      try {
        await call(sub, () =>
          cc.virtualMachineScaleSetVMs
            .update(
              rg,
              name,
              instanceId,
              {
                location: current?.location,
                networkProfileConfiguration: { networkInterfaceConfigurations: nics },
              } as VirtualMachineScaleSetVM,
              {
                ...(kind === "get-then-put-if-match" ? { ifMatch: etag } : {}),
                onResponse: (r) => (headers = r.headers),
              },
            )
            .submitted(),
        );
      } catch (err) {
        if (isRestError(err) && err.statusCode === 412) {
          counters.retries412++;
          current = undefined;
          continue;
        }
        if (isRestError(err) && err.statusCode === 404) return;
        throw err;
      }
      await waitOperation(sub, headers);
      return;
    }
  }

  async function apply(c: Change): Promise<void> {
    await applyModel(c);
    const { sub, rg, name } = parts(c.scaleSetId);
    const vms: VirtualMachineScaleSetVM[] = [];
    await call(sub, async () => {
      vms.length = 0;
      for await (const vm of client(sub).virtualMachineScaleSetVMs.list(rg, name)) vms.push(vm);
    });
    let next = 0;
    const worker = async () => {
      while (next < vms.length) await applyInstance(c, vms[next++] as VirtualMachineScaleSetVM);
    };
    await Promise.all(Array.from({ length: Math.min(opts.instanceConcurrency, vms.length) }, worker));
  }

  // A FIFO of changes worked by `concurrency` workers.
  const queue: Change[] = [];
  let active = 0;
  let waiters: Array<() => void> = [];
  // One change at a time per scale set (cloud-provider-azure locks per VMSS; Terraform applies one resource at a
  // time), up to `concurrency` scale sets at once.
  const busy = new Set<string>();
  const pump = () => {
    for (let i = 0; i < queue.length && active < opts.concurrency;) {
      const c = queue[i] as Change;
      const key = c.scaleSetId.toLowerCase();
      if (busy.has(key)) {
        i++;
        continue;
      }
      queue.splice(i, 1);
      busy.add(key);
      active++;
      void apply(c)
        .catch(() => {
          counters.errors++;
        })
        .finally(() => {
          counters.changes++;
          busy.delete(key);
          active--;
          pump();
          if (active === 0 && queue.length === 0) {
            const w = waiters;
            waiters = [];
            for (const r of w) r();
          }
        });
    }
  };
  return {
    async submit(c) {
      queue.push(c);
      pump();
    },
    idle: () => (active === 0 && queue.length === 0 ? Promise.resolve() : new Promise<void>((r) => waiters.push(r))),
    async close() {
      await Promise.resolve();
    },
    own: () => ({ ...counters }),
  };
}
