// The overhead workload in a process of its own (spawned by bench/main.ts): process.cpuUsage counts every thread of
// the process, so anything an earlier workload left running (a pass still polling, a pacer's timer) would be billed
// to these messages. Prints the result as one JSON line on stdout.
import { runOverhead } from "./overhead";

const [storage, messages, seed] = process.argv.slice(2);
if (!storage || !messages || !seed)
  throw new Error("usage: overheadProcess.ts <storage connection string> <messages> <seed>");
runOverhead(storage, Number(messages), Number(seed)).then(
  (res) => {
    process.stdout.write(`${JSON.stringify(res)}\n`);
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
    process.exit(1);
  },
);
