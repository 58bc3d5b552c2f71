import { describe, expect, it } from "vitest";
import { currentInvocation, runInInvocation } from "../../src/telemetry/invocation";

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe("the current invocation", () => {
  it("is the one the code runs in, across awaits, and none outside", async () => {
    expect(currentInvocation()).toBeUndefined();
    const seen = await runInInvocation({ invocationId: "inv-1", functionName: "applyBackendPools" }, async () => {
      await tick();
      return currentInvocation()?.invocationId;
    });
    expect(seen).toBe("inv-1");
    expect(currentInvocation()).toBeUndefined();
  });

  it("keeps two invocations running at once apart, each line written to its own log", async () => {
    const lines: string[] = [];
    const run = (id: string) =>
      runInInvocation(
        { invocationId: id, functionName: "f", write: (level, line) => lines.push(`${id} ${level} ${line}`) },
        async () => {
          await tick();
          currentInvocation()?.write?.("info", `from ${currentInvocation()?.invocationId}`);
          await tick();
          currentInvocation()?.write?.("warn", `from ${currentInvocation()?.invocationId}`);
        },
      );
    await Promise.all([run("a"), run("b")]);
    expect(lines.sort()).toEqual(["a info from a", "a warn from a", "b info from b", "b warn from b"]);
  });
});
