/** Thrown inside a reconcile to leave it and come back later; never escapes reconcileScaleSet. */
export class Requeue extends Error {
  constructor(readonly delayMs: number, readonly why: string) {
    super(why);
  }
}
