import { describe, expect, it } from "vitest";
import { esc, html, Safe } from "../../src/intake/html";

/** src/intake/html.ts: the status page shows IDs and reasons other writers chose, so nothing they wrote is markup. */
describe("html", () => {
  it("escapes every interpolated value, quotes included, so input cannot leave an attribute or open a tag", () => {
    const reason = `"><script>alert('x')</script>&\``;
    const out = html`<span title="${reason}">${reason}</span>`.text;
    expect(out).not.toContain("<script>");
    expect(out).toBe(
      `<span title="&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&#96;">` +
        `&quot;&gt;&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&#96;</span>`,
    );
  });

  it("keeps markup built by html as is when nested, and does not escape it twice", () => {
    const inner = html`<b>${"a&b"}</b>`;
    expect(html`<p>${inner}</p>`.text).toBe("<p><b>a&amp;b</b></p>");
    const list = html`<ul>
      ${["<x>", html`<li>ok</li>`]}
    </ul>`;
    expect(list.text.replace(/\s+/g, "")).toBe("<ul>&lt;x&gt;<li>ok</li></ul>");
  });

  it("renders nothing for an absent or false part, and numbers as text", () => {
    expect(html`[${undefined}${null}${false}${0}]`.text).toBe("[0]");
    expect(esc(null)).toBe("");
  });

  it("treats only a Safe as markup, not a string that merely looks like one", () => {
    expect(html`${new Safe("<i>")}${"<i>"}`.text).toBe("<i>&lt;i&gt;");
    expect(String(html`<br />`)).toBe("<br />");
  });
});
