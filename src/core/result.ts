/** A value or the reason it was refused; for parsers whose refusals are expected input, not bugs. */
export type Result<T> = { ok: true; value: T } | { ok: false; reason: string };

export const ok = <T>(value: T): Result<T> => ({ ok: true, value });
export const refuse = <T = never>(reason: string): Result<T> => ({ ok: false, reason });
