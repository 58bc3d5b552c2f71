import { execFileSync } from "node:child_process";
import path from "node:path";

const REPO = path.join(__dirname, "..");

/**
 * The commit whose code a run measures, for RESULTS.md to say beside each section: `git rev-parse --short HEAD`, with
 * "+changes" when src/, bench/ or host.json differ from it (the figures then describe no commit), or "unknown" outside
 * a git checkout.
 */
export function measuredCommit(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO, encoding: "utf8" }).trim();
    const head = git("rev-parse", "--short", "HEAD");
    return git("status", "--porcelain", "--", "src", "bench", "host.json") === "" ? head : `${head}+changes`;
  } catch {
    return "unknown";
  }
}
