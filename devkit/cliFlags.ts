import { parseArgs, type ParseArgsConfig } from "node:util";

/** Command-line flags of the soak and the benchmarks, read by node:util's parseArgs. */

export class UsageError extends Error {
  override name = "UsageError";
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/** The values parseArgs gives for `options`, strict and without positionals. */
export type FlagValues<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; strict: true; allowPositionals: false }>
>["values"];

/** Strict: an unknown flag, a missing value or a stray argument is a UsageError that ends with the usage. */
export function parseFlags<O extends Options>(argv: readonly string[], options: O, usage: string): FlagValues<O> {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n${usage}`);
  }
}

/**
 * A flag's number: the fallback when absent, else a finite number above 0 (or 0 too, whole, at most max, as asked) or a
 * UsageError.
 */
export function numberFlag(
  name: string,
  raw: string | boolean | undefined,
  fallback: number,
  usage: string,
  opts: { whole?: boolean; zero?: boolean; max?: number } = {},
): number {
  if (raw === undefined) return fallback;
  const n = typeof raw === "string" && raw.trim() !== "" ? Number(raw) : Number.NaN;
  const fits =
    Number.isFinite(n) &&
    (opts.zero ? n >= 0 : n > 0) &&
    (!opts.whole || Number.isInteger(n)) &&
    (opts.max === undefined || n <= opts.max);
  if (!fits) {
    const what = `${opts.whole ? "a whole number" : "a number"} ${opts.zero ? "from 0" : "above 0"}${opts.max !== undefined ? ` to ${opts.max}` : ""}`;
    throw new UsageError(`--${name} needs ${what}, got ${JSON.stringify(raw)}\n${usage}`);
  }
  return n;
}
