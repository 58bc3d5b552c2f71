/**
 * What the Functions host hands a queue trigger: the base64 message decoded, parsed as JSON when it is JSON,
 * else the text (host.json messageEncoding base64). Shared by the harness, the soak and the benchmarks.
 */
export function decodeQueueBody(text: string): unknown {
  const raw = Buffer.from(text, "base64").toString("utf8");
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
