import { describe, expect, it } from "vitest";
import { wantsHtml } from "../../src/intake/contentNegotiation";

/** src/intake/contentNegotiation.ts: GET /api/status answers a browser with the page and every other client with JSON. */
describe("wantsHtml", () => {
  it("gives a browser's Accept the page and curl's or a script's the JSON", () => {
    const firefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
    expect(wantsHtml(firefox, null)).toBe(true);
    expect(wantsHtml("*/*", null)).toBe(false);
    expect(wantsHtml(null, null)).toBe(false);
    expect(wantsHtml("application/json", null)).toBe(false);
  });

  it("lets the higher quality win, and at equal quality the type the client listed first", () => {
    expect(wantsHtml("application/json;q=0.5, text/html", null)).toBe(true);
    expect(wantsHtml("text/html;q=0.4, application/json;q=0.9", null)).toBe(false);
    expect(wantsHtml("application/json, text/html", null)).toBe(false);
    expect(wantsHtml("text/html, application/json", null)).toBe(true);
  });

  it("never picks a type the client refused with q=0", () => {
    expect(wantsHtml("text/html;q=0, */*", null)).toBe(false);
    expect(wantsHtml("TEXT/HTML; Q=0", null)).toBe(false);
  });

  it("lets ?format= override whatever Accept says", () => {
    expect(wantsHtml("application/json", "html")).toBe(true);
    expect(wantsHtml("text/html", "json")).toBe(false);
  });
});
