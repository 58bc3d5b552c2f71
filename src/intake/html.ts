/**
 * HTML escaping for the status page. IDs, reasons and poison messages come from users and other writers, so
 * every interpolated value goes through `esc`; markup is only ever built by `html` from trusted literals.
 */

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

export function esc(value: unknown): string {
  return String(value ?? "").replace(/[&<>"'`]/g, (c) => ENTITIES[c] ?? c);
}

/** Markup that is already safe: produced by `html`, never by concatenating input. */
export class Safe {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Part = Safe | string | number | undefined | null | false | readonly Part[];

function render(part: Part): string {
  if (part === undefined || part === null || part === false) return "";
  if (part instanceof Safe) return part.text;
  if (Array.isArray(part)) return part.map(render).join("");
  return esc(part);
}

/** Tagged template: literal parts are trusted, every `${value}` is escaped unless it is itself `Safe`. */
export function html(strings: TemplateStringsArray, ...values: Part[]): Safe {
  let out = strings[0] ?? "";
  values.forEach((v, i) => {
    out += render(v) + (strings[i + 1] ?? "");
  });
  return new Safe(out);
}
