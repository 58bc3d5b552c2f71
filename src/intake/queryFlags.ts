import { problem, type Problem } from "./problem";

/**
 * The API's query parameters, read as the Functions host hands them over. The host keys the query case-insensitively
 * and joins a repeated parameter's values with "," (ASP.NET Core's query collection), so `?dryRun=false&dryRun=true`
 * reaches the app as one `dryRun` of "false,true", and `?DRYRUN=true` as a `DRYRUN` that `query.get("dryRun")` never
 * sees. Read naively, either could turn a dry run into a real declaration. So a route names its parameters once: each
 * is matched in any casing, and one given more than once (as several entries, or as the host's joined value: no value
 * of these parameters holds a comma, ARM IDs included) is refused, naming it, before anything is read or done.
 */

type Query = Pick<URLSearchParams, "get"> & Partial<Pick<URLSearchParams, "entries">>;

export type QueryFlags<N extends string> = Record<N, string | null>;

export function readQueryFlags<const N extends string>(
  query: Query,
  names: readonly N[],
): { ok: true; value: QueryFlags<N> } | { ok: false; problem: Problem } {
  const entries: [string, string][] = query.entries ? [...query.entries()] : [];
  const out = {} as QueryFlags<N>;
  for (const name of names) {
    const given = query.entries
      ? entries.filter(([k]) => k.toLowerCase() === name.toLowerCase()).map(([, v]) => v)
      : [query.get(name)].filter((v): v is string => v !== null);
    const values = given.flatMap((v) => v.split(","));
    if (values.length > 1)
      return {
        ok: false,
        problem: problem(
          400,
          "repeated_parameter",
          `${name}: given ${values.length} times; give it once (a repeated parameter is refused, not guessed at)`,
          name,
        ),
      };
    out[name] = values[0] ?? null;
  }
  return { ok: true, value: out };
}
