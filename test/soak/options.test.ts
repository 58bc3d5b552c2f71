import { describe, expect, it } from "vitest";
import { soakOptions } from "./options";

describe("npm run soak's flags", () => {
  it("reads them, defaults otherwise", () => {
    expect(soakOptions([])).toEqual({
      seed: 1,
      minutes: 1,
      maxSteps: 10_000,
      timeScale: 60,
      hosts: 1,
      eventDelivery: "eventGrid",
      plan: false,
      help: false,
    });
    expect(
      soakOptions([
        "--seed",
        "42",
        "--minutes=0.5",
        "--max-steps",
        "300",
        "--time-scale",
        "30",
        "--hosts",
        "3",
        "--simple-events",
        "--plan",
      ]),
    ).toEqual({
      seed: 42,
      minutes: 0.5,
      maxSteps: 300,
      timeScale: 30,
      hosts: 3,
      eventDelivery: "simple",
      plan: true,
      help: false,
    });
  });

  it("refuses unknown and malformed flags with the usage", () => {
    expect(() => soakOptions(["--sed", "4"])).toThrow(/^Unknown option '--sed'[\s\S]*\nusage: npm run soak/);
    expect(() => soakOptions(["--seed"])).toThrow(/^Option '--seed <value>' argument missing/);
    expect(() => soakOptions(["--seed", "1.5"])).toThrow(/^--seed needs a whole number above 0, got "1.5"/);
    expect(() => soakOptions(["--minutes", "-1"])).toThrow(/^Option '--minutes' argument is ambiguous/);
    expect(() => soakOptions(["--minutes=0"])).toThrow(/^--minutes needs a number above 0, got "0"/);
    expect(() => soakOptions(["--plan=1"])).toThrow(/^Option '--plan' does not take an argument/);
  });
});
