import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["dist/**", "node_modules/**"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration suites share one Azurite; each test uses its own table/queue names, so files may run in parallel.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
