import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadRegisteredFunctions } from "../../local/host/loadFunctions";
import { REPO_ROOT } from "./armSchema";
import { readJson, unregisteredEventGridDestinations, type ArmTemplate } from "./templateChecks";

/**
 * The template's Event Grid subscription delivers to a function the built app really registers with an Event Grid
 * trigger.
 */
describe("infra/main.json's Event Grid destination against the built app", () => {
  const main = readJson<ArmTemplate>("main.json");
  const entryGlob = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { main: string }).main;
  const registered = loadRegisteredFunctions({ entryGlob, appDir: REPO_ROOT, log: () => undefined });
  const eventGridNames = registered.filter((f) => f.trigger.type === "eventGridTrigger").map((f) => f.name);

  it("names a function registered with an Event Grid trigger", () => {
    expect(eventGridNames).toEqual(["onResourceEvent"]);
    expect(unregisteredEventGridDestinations(main, eventGridNames)).toEqual([]);
  });

  it("would be caught if it named a function that is not an Event Grid trigger", () => {
    const otherTriggers = registered.filter((f) => f.trigger.type !== "eventGridTrigger").map((f) => f.name);
    expect(unregisteredEventGridDestinations(main, otherTriggers)).toEqual([
      `Event Grid delivers to function "onResourceEvent", but the app registers no Event Grid trigger by that name (registered: ${otherTriggers.join(", ")})`,
    ]);
  });
});
