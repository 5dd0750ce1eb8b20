/**
 * Bytes that many calls together may hold at once (`recovery.maxHeldStreamBytes` for the streams held for resumes,
 * joins and records; `limits.maxDecodingBytes` for compressed answers being decoded): a few calls alone could
 * otherwise exhaust memory, as abandoned streams and gzip bombs did.
 */
export class ByteBudget {
  #held = 0

  constructor(readonly total: number) {}

  /** Takes `bytes`; false (and nothing taken) when they would pass the total. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.total) return false
    this.#held += bytes
    return true
  }

  /** Gives back bytes taken. */
  give(bytes: number): void {
    this.#held -= bytes
  }

  /** The bytes held now. */
  get held(): number {
    return this.#held
  }
}
