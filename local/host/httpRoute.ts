/**
 * HTTP trigger routes as the host matches them: `route` (default: the function name) under the route prefix,
 * case-insensitive literals, `{name}`, optional `{name?}`, catch-all `{*name}`, and the common inline constraints
 * (`{id:int}`, `:long`, `:double`, `:bool`, `:guid`, `:alpha`); other constraints are accepted without checking.
 */
export interface CompiledRoute {
  template: string;
  match(pathSegments: string[]): Record<string, string> | undefined;
}

type Segment =
  | { kind: "literal"; text: string }
  | { kind: "param"; name: string; optional: boolean; catchAll: boolean; constraint: string | undefined };

const CONSTRAINTS: Record<string, RegExp> = {
  int: /^-?\d+$/,
  long: /^-?\d+$/,
  double: /^-?\d+(\.\d+)?$/,
  float: /^-?\d+(\.\d+)?$/,
  decimal: /^-?\d+(\.\d+)?$/,
  bool: /^(true|false)$/i,
  guid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  alpha: /^[a-z]+$/i,
};

export function splitPath(path: string): string[] {
  return path.split("/").filter((s) => s.length > 0);
}

export function compileRoute(prefix: string, route: string): CompiledRoute {
  const template = [prefix, route].filter(Boolean).join("/");
  const segments: Segment[] = splitPath(template).map((s) => {
    const m = /^\{(\*)?([A-Za-z_][\w]*)(?::([A-Za-z]+)(?:\([^)]*\))?)?(\?)?\}$/.exec(s);
    if (!m) return { kind: "literal", text: s.toLowerCase() };
    return {
      kind: "param",
      name: m[2] as string,
      catchAll: !!m[1],
      constraint: m[3]?.toLowerCase(),
      optional: !!m[4] || !!m[1],
    };
  });
  return {
    template,
    match(path) {
      const params: Record<string, string> = {};
      for (let i = 0; i < segments.length; i++) {
        const seg = segments[i] as Segment;
        const value = path[i];
        if (seg.kind === "literal") {
          if (value === undefined || decodeURIComponent(value).toLowerCase() !== seg.text) return undefined;
          continue;
        }
        if (seg.catchAll) {
          const rest = path.slice(i).map(decodeURIComponent).join("/");
          if (rest) params[seg.name] = rest;
          return params;
        }
        if (value === undefined) {
          if (!seg.optional) return undefined;
          continue;
        }
        const decoded = decodeURIComponent(value);
        const check = seg.constraint ? CONSTRAINTS[seg.constraint] : undefined;
        if (check && !check.test(decoded)) return undefined;
        params[seg.name] = decoded;
      }
      return path.length <= segments.length ? params : undefined;
    },
  };
}
