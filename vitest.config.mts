import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["dist/**", "node_modules/**"],
    globalSetup: ["test/support/globalSetup.ts"],
    // Generous: integration suites wait for real reconciles, and a shared 2-core machine can be slow.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Integration suites share one Azurite; each test uses its own table/queue names, so files may run in parallel.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
  },
});
