import { createDefaultHttpClient, createEmptyPipeline } from "@azure/core-rest-pipeline";
import { afterEach, describe, expect, it } from "vitest";
import {
  awaitWriteOperation,
  getThroughPipeline,
  waitForOperation,
  type PollOptions,
} from "../../src/azure/operationPoller";
import { FatalError, OWN_PACING, ThrottledError, TransientError } from "../../src/core/errors";
import { manualClock } from "../support/harness";
import { recordingServer, type Answer, type RecordingServer } from "../support/recordingServer";

/**
 * The long-running operation's poll loop over real HTTP: a loopback server plays ARM's operation resource, answering
 * each poll in turn from a script (the last answer repeats), and the GETs go through an SDK pipeline as the edges send
 * them. Time is a manual clock: each sleep is recorded and moves it at once.
 */
let server: RecordingServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const running = (retryAfter?: string): Answer => ({
  status: 200,
  body: { status: "InProgress" },
  ...(retryAfter === undefined ? {} : { headers: { "retry-after": retryAfter } }),
});

/** ARM's operation resource answering `script` in order, and the poll options and GET an edge would use on it. */
async function operation(script: Answer[], maxWaitMs = 600_000) {
  let i = 0;
  server = await recordingServer(() => script[Math.min(i++, script.length - 1)]!);
  const clock = manualClock();
  const slept: number[] = [];
  const opts: PollOptions = {
    armEndpoint: server.url,
    clock: { now: clock.now, sleep: (ms) => (slept.push(ms), clock.sleep(ms)) },
    maxWaitMs,
    defaultIntervalMs: 500,
  };
  const pipeline = createEmptyPipeline();
  // The loopback server speaks plain HTTP; the edges' pipelines reach ARM (and the simulator) over TLS.
  pipeline.addPolicy({
    name: "loopbackHttp",
    sendRequest: (request, next) => ((request.allowInsecureConnection = true), next(request)),
  });
  const httpClient = createDefaultHttpClient();
  const url = `${server.url}/subscriptions/s/providers/Microsoft.Compute/locations/westeurope/operations/op-1`;
  const get = (u: string) => getThroughPipeline(pipeline, httpClient, u, 5_000);
  return { url, opts, get, slept, polls: () => server!.received.length };
}

describe("waitForOperation", () => {
  it("polls until Succeeded, waiting what each answer's Retry-After asks (none or 0: its own interval)", async () => {
    const op = await operation([running("3"), running("0"), running(), { status: 200, body: { status: "Succeeded" } }]);
    expect(await waitForOperation(op.url, "2", op.opts, op.get)).toEqual({ status: "Succeeded" });
    expect(op.slept).toEqual([2_000, 3_000, 500, 500]);
    expect(op.polls()).toBe(4);
  });

  it("a Failed or Canceled end answers ARM's code and message", async () => {
    const failed = await operation([
      {
        status: 200,
        body: { status: "Failed", error: { code: "Conflict", message: "Another operation is running." } },
      },
    ]);
    expect(await waitForOperation(failed.url, undefined, failed.opts, failed.get)).toEqual({
      status: "Failed",
      error: "Conflict Another operation is running.",
    });
    await server!.close();
    const canceled = await operation([{ status: 200, body: { status: "Canceled" } }]);
    expect(await waitForOperation(canceled.url, undefined, canceled.opts, canceled.get)).toEqual({
      status: "Canceled",
      error: "canceled",
    });
  });

  it("refuses, without a request, an operation URL on a host other than the ARM endpoint (the token would go there)", async () => {
    const op = await operation([running()]);
    const elsewhere = "http://127.0.0.2:1/subscriptions/s/operations/op-1";
    await expect(waitForOperation(elsewhere, undefined, op.opts, op.get)).rejects.toThrow(
      new FatalError(`operation URL ${elsewhere} is not on ${op.opts.armEndpoint}; refusing to poll it`),
    );
    expect(op.polls()).toBe(0);
  });

  it("a poll our own read pacing holds is asked again after the wait, however often, never taken for a failed one", async () => {
    const op = await operation([running(), { status: 200, body: { status: "Succeeded" } }]);
    let held = 8;
    const paced = (u: string) =>
      held-- > 0 ? Promise.reject(new ThrottledError("reads are paced for 2 s", 2_000, 429, OWN_PACING)) : op.get(u);
    expect(await waitForOperation(op.url, "1", op.opts, paced)).toEqual({ status: "Succeeded" });
    expect(op.slept).toEqual([1_000, ...Array<number>(8).fill(2_000), 500]);
    expect(op.polls()).toBe(2);
  });

  it("a throttled or failing poll is asked again after its Retry-After, the operation not abandoned; six in a row give up", async () => {
    const throttled: Answer = { status: 429, headers: { "retry-after": "7" } };
    const recovers = await operation([throttled, { status: 503 }, { status: 200, body: { status: "Succeeded" } }]);
    expect(await waitForOperation(recovers.url, "1", recovers.opts, recovers.get)).toEqual({ status: "Succeeded" });
    expect(recovers.slept).toEqual([1_000, 7_000, 500]);
    await server!.close();

    const down = await operation([{ status: 503, headers: { "retry-after": "2" } }]);
    const err = await waitForOperation(down.url, "1", down.opts, down.get).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransientError);
    expect((err as TransientError).message).toBe(`polling ${down.url}: 503`);
    expect(down.polls()).toBe(6);
  });

  it("a read budget closed longer than the pacer waits (ThrottledError) is asked again after the wait it names", async () => {
    const op = await operation([{ status: 200, body: { status: "Succeeded" } }]);
    let refused = false;
    const paced = async (u: string) => {
      if (!refused) {
        refused = true;
        throw new ThrottledError("read budget closed", 12_000);
      }
      return op.get(u);
    };
    expect(await waitForOperation(op.url, undefined, op.opts, paced)).toEqual({ status: "Succeeded" });
    expect(op.slept).toEqual([500, 12_000]);
  });

  it("still running at the deadline: left as transient, naming its status; a 4xx poll is fatal with ARM's answer", async () => {
    const slow = await operation([running("4")], 10_000);
    await expect(waitForOperation(slow.url, "4", slow.opts, slow.get)).rejects.toThrow(
      new TransientError(`operation ${slow.url} still InProgress after 10000 ms`, 500),
    );
    // The last sleep is cut to the deadline: the operation is asked once more at it, not after it.
    expect(slow.slept).toEqual([4_000, 4_000, 2_000]);
    await server!.close();

    const gone = await operation([{ status: 404, body: { error: { code: "NotFound" } } }]);
    await expect(waitForOperation(gone.url, undefined, gone.opts, gone.get)).rejects.toThrow(
      new FatalError(`polling ${gone.url}: 404 {"error":{"code":"NotFound"}}`, 404),
    );
  });
});

/** A write's answer headers. */
const headers = (h: Record<string, string>) => ({ get: (n: string) => h[n] });

describe("awaitWriteOperation", () => {
  it("waits on Azure-AsyncOperation before Location; a write answered without either has ended", async () => {
    const op = await operation([{ status: 200, body: { status: "Succeeded" } }]);
    await awaitWriteOperation(headers({}), "PUT nic", op.opts, op.get);
    expect(op.polls()).toBe(0);
    await awaitWriteOperation(
      headers({ "azure-asyncoperation": op.url, location: `${op.url}-location` }),
      "PUT nic",
      op.opts,
      op.get,
    );
    expect(server!.received.map((r) => r.url)).toEqual([new URL(op.url).pathname]);
  });

  it("an operation that ended Failed throws as transient: it may have applied part, so it is retried from fresh state", async () => {
    const op = await operation([{ status: 200, body: { status: "Failed", error: { code: "InternalError" } } }]);
    const err = await awaitWriteOperation(headers({ location: op.url }), "PUT vmss", op.opts, op.get).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TransientError);
    expect((err as TransientError).message).toBe("PUT vmss: operation Failed: InternalError");
  });
});
