import { randomBytes } from "node:crypto";
import { azuriteConnectionString, DEFAULT_AZURITE_PORTS } from "./azurite";

/** The suite's Azurite, as set by globalSetup. */
export function testStorageConnectionString(): string {
  return process.env.POOLSYNC_TEST_STORAGE ?? azuriteConnectionString(DEFAULT_AZURITE_PORTS);
}

/** A table or queue name of its own for each test, so files can run in parallel on one Azurite. */
export function uniqueName(prefix: string): string {
  // Table names: alphanumeric, 3-63, start with a letter. Queue names: lowercase, digits, dashes. Satisfy both.
  return `${prefix}${randomBytes(5).toString("hex")}`.toLowerCase();
}
