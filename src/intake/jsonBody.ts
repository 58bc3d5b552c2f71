import { problem, type Parsed } from "./problem";

/** A declaration is well under 1 KiB (each ID is at most 400 characters); anything far bigger is refused unread. */
export const MAX_BODY_BYTES = 8 * 1024;

/** What this module needs of a request: the library's HttpRequest has it, and so does a test double. */
export interface BodySource {
  headers: { get(name: string): string | null };
  arrayBuffer(): Promise<ArrayBuffer>;
}

function mediaType(contentType: string | null): string | undefined {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  return type || undefined;
}

/**
 * Content type, size, then JSON, in that order: each refusal names the first thing wrong. The size is checked on
 * Content-Length before the body is touched and again on the bytes (chunked requests carry no length).
 */
export async function readJsonBody(req: BodySource, maxBytes = MAX_BODY_BYTES): Promise<Parsed<unknown>> {
  const type = mediaType(req.headers.get("content-type"));
  if (type !== "application/json") {
    return {
      ok: false,
      problem: problem(
        415,
        "unsupported_media_type",
        `content-type must be application/json, not ${type ?? "missing"}`,
      ),
    };
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers.get("content-type") ?? "")?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") {
    return {
      ok: false,
      problem: problem(415, "unsupported_media_type", `content-type charset must be utf-8, not ${charset}`),
    };
  }
  const tooLarge = (size: number) => ({
    ok: false as const,
    problem: problem(413, "body_too_large", `body is ${size} bytes, over the ${maxBytes}-byte limit`),
  });
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) return tooLarge(declared);
  const bytes = Buffer.from(await req.arrayBuffer());
  if (bytes.length > maxBytes) return tooLarge(bytes.length);
  if (bytes.length === 0)
    return { ok: false, problem: problem(400, "invalid_json", "body is empty; send a JSON object") };
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { ok: false, problem: problem(400, "invalid_json", "body is not valid UTF-8") };
  }
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { ok: false, problem: problem(400, "invalid_json", `body is not valid JSON: ${(err as Error).message}`) };
  }
}
