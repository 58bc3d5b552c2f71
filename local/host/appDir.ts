import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The app directory: the nearest folder above this file with package.json and host.json (works built or not). */
export function findAppDir(from: string): string {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "host.json"))) return dir;
    if (dirname(dir) === dir) throw new Error(`No package.json with a host.json next to it above ${from}`);
  }
}
