// The interleaved writer: a change another writer makes to a resource just before the next write to it arrives. With
// it a test makes the ETag race happen every time: the next If-Match write gets 412, a write without If-Match loses
// the other writer's change.
import type { JsonObject } from "./json";

/** Mutates the stored wire-shaped resource (a scale set or an instance) in place. */
export type Mutation = (resource: JsonObject) => void;

export interface InterleaveHandle {
  /** How many times the change has been applied so far. */
  applied(): number;
  cancel(): void;
}

interface Pending {
  matches: (id: string) => boolean;
  mutate: Mutation;
  left: number;
  applied: number;
}

export class Interleaver {
  private pending: Pending[] = [];

  add(idOrPattern: string | RegExp, mutate: Mutation, times = 1): InterleaveHandle {
    const matches =
      typeof idOrPattern === "string"
        ? (id: string) => id.toLowerCase() === idOrPattern.toLowerCase().replace(/\/+$/, "")
        : (id: string) => idOrPattern.test(id);
    const p: Pending = { matches, mutate, left: times, applied: 0 };
    this.pending.push(p);
    return {
      applied: () => p.applied,
      cancel: () => {
        this.pending = this.pending.filter((x) => x !== p);
      },
    };
  }

  clear(): void {
    this.pending = [];
  }

  /**
   * Applies the mutations due before a write to `id` through `apply`; each is consumed once it went through. One the
   * simulator refused (the other writer met a running operation, as the app's writes do) stays for the next write.
   */
  applyDue(id: string, apply: (mutate: Mutation) => boolean): void {
    for (const p of this.pending.filter((x) => x.left > 0 && x.matches(id))) {
      if (!apply(p.mutate)) continue;
      p.left--;
      p.applied++;
    }
    this.pending = this.pending.filter((p) => p.left > 0);
  }
}
