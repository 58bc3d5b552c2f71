import { defineConfig } from "vitest/config";

/**
 * Test files that must wait in real time, so they stay out of `npm run test:fast` (`vitest run --project 'fast*'`);
 * `npm test` (`vitest run`) runs every project. Each entry says what it waits for: time that no injected clock can
 * move (processes starting, Azurite's visibility timeouts, a real declare window, the soak's and benchmark's minutes).
 */
const REAL_WAITING = [
  "test/e2e/**", // `npm run local`, the demo and several hosts as processes: builds, starts and drains them
  "test/soak/soak.test.ts", // 15 s of chaos by design, then the quiesce
  "test/bench/smoke.test.ts", // a quick benchmark run as a process (simulated minutes, real start-up)
  "test/integration/declareWindow.test.ts", // a 30 s declare window of Azurite queue visibility, read across processes
  "test/intake/declareWindow.test.ts", // the declare window through the HTTP API, in Azurite's time
  "test/local/listenerLock.test.ts", // the host's blob lease (15 s minimum in Azurite) taken over by another host
  "test/local/timerAndDrain.test.ts", // the runtime's timer fires on the wall clock and drains on stop
  "test/local/functionTimeout.test.ts", // host.json's functionTimeout (1 s there) and Azurite's visibility timeout
  "test/scripts/smoke.test.ts", // `npm run local` as a process, and the smoke run's 5 s wait for an event that never comes
  "test/bench/hostProcesses.test.ts", // instances as processes starting, and a killed one's message lease running out
  "test/bench/quiescence.test.ts", // bursts at time scale 1, then seconds for real sockets and timers to close
  "test/faults/storageDown.test.ts", // the storage SDK's own retry backoff against a closed port, 5 s per call
  "test/integration/writeInDoubt.test.ts", // a write the client gave up on after 1 s lands 6 s after it was sent
  "test/integration/ipPoolWriteInDoubt.test.ts", // the same for an IP-based pool's write, landing 6 s after it was sent
  "test/integration/gatewayWriteInDoubt.test.ts", // the same for a gateway's write, landing 6 s after it was sent
  "test/faults/storageBusy.test.ts", // the Table SDK's own retry backoff on 503 ServerBusy, about 7 s per failed call
  "test/integration/intakeWait.test.ts", // a 2 s declare window in Azurite's visibility, stores held 1.5 s each: 12 s
  "test/integration/tableOpsPerDeclaration.test.ts", // a 2 s declare window, then 4.5 s quiet so the next one leads
];

/**
 * Test files whose cost is the size or the process they prove, so they stay out of `npm run test:fast` too (the fast
 * loop's 60 s on two cores has room for logic, not for thousands of requests or a browser); `npm test` runs them. Each
 * says what it spends: requests by the thousand at the sizes Azure publishes, processes started besides the test's, or
 * a heavy tool run over the tree as `npm run lint` is (which the fast loop leaves out too).
 */
const LARGE_BY_DESIGN = [
  "test/faults/eventBatches.test.ts", // Event Grid's largest batches (1,000, 5,000 and 600 odd events) through the webhook
  "test/sim/publishedBuckets.test.ts", // NRP's 1,000 writes, CRP's 1,800 high-cost LISTs, ARM's 3,750 reads, one by one
  "test/integration/readWindows.test.ts", // 300 reads at once through ARM's read bucket and CRP's 3-minute window, paced and not
  "test/sim/specConformance.test.ts", // Azure's OpenAPI definitions compiled (ajv) and every answer of the simulator checked
  "test/integration/specConformance.test.ts", // the same definitions compiled again for every request poolsync sends
  "test/intake/statusPage.test.ts", // headless Chromium reading the status page
  "test/intake/statusNics.test.ts", // headless Chromium reading the status page's NIC view
  "test/scripts/package.test.ts", // the deployment package built, with its production install
  "test/format.test.ts", // Prettier over the whole tree (npm run format:check)
  "test/app/telemetryStart.test.ts", // the app started as processes, with and without telemetry
  "test/azure/lazyArmSdks.test.ts", // fresh Node processes counting which SDKs a function loads
  "test/longFunctions.test.ts", // the TypeScript compiler over src/
  "test/infra/armSchema.test.ts", // the templates against ARM's published schemas of every resource type they use
  "test/infra/kql.test.ts", // Kusto's language service over every query of the workbook and the alerts
];

/** A folder entry means its test files; a file entry is itself. */
const testFiles = (entries: string[]) => entries.map((p) => (p.endsWith(".ts") ? p : `${p}/*.test.ts`));

export default defineConfig({
  test: {
    exclude: ["dist/**", "node_modules/**"],
    globalSetup: ["test/support/globalSetup.ts"],
    // Generous: integration suites wait for real reconciles, and a shared 2-core machine can be slow.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Integration suites share one Azurite; each test uses its own table/queue names, so files may run in parallel.
    reporters: ["default", ["json", { outputFile: "test-results/vitest.json" }]],
    projects: [
      {
        extends: true,
        test: {
          // Every fast file in one project: one set of workers (each imports the SDKs once) runs them all, longest
          // first, and the files of test/support/freshModuleFiles.ts get a module graph of their own
          // (test/support/freshModules.ts).
          name: "fast",
          include: ["test/**/*.test.ts"],
          exclude: ["dist/**", "node_modules/**", ...REAL_WAITING, ...LARGE_BY_DESIGN],
          isolate: false,
          setupFiles: ["test/support/storageReady.ts", "test/support/freshModules.ts"],
        },
      },
      {
        extends: true,
        test: { name: "real-waiting", include: testFiles(REAL_WAITING), setupFiles: ["test/support/storageReady.ts"] },
      },
      {
        extends: true,
        test: {
          name: "large-by-design",
          include: LARGE_BY_DESIGN,
          setupFiles: ["test/support/storageReady.ts"],
          // Each file in a process of its own (the default): eventBatches and the status pages start the Functions app.
          isolate: true,
        },
      },
    ],
  },
});
