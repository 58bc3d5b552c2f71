/**
 * Content negotiation for `GET /api/status`: a browser (Accept: text/html, …) gets the page, everything else JSON.
 * `?format=html|json` overrides, for a link that must open one or the other.
 */
export function wantsHtml(accept: string | null, format: string | null): boolean {
  if (format === "html") return true;
  if (format === "json") return false;
  const ranges = (accept ?? "").split(",").map((part, index) => {
    const [type = "", ...params] = part.trim().toLowerCase().split(";");
    const q = Number(
      params
        .map((p) => p.trim())
        .find((p) => p.startsWith("q="))
        ?.slice(2) ?? "1",
    );
    return { type: type.trim(), q: Number.isFinite(q) ? q : 0, index };
  });
  const best = (types: string[]) =>
    ranges.filter((r) => types.includes(r.type) && r.q > 0).sort((a, b) => b.q - a.q || a.index - b.index)[0];
  const page = best(["text/html", "application/xhtml+xml"]);
  if (!page) return false;
  const json = best(["application/json"]);
  // Higher quality wins; at equal quality, whichever the client listed first.
  return !json || page.q > json.q || (page.q === json.q && page.index < json.index);
}
