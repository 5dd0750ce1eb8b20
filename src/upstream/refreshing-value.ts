/** A value that expires (an access token, temporary credentials) and when it does, epoch ms; undefined: never. */
export interface Expiring<T> {
  value: T
  expiresAt: number | undefined
}

/** How long before expiry a value is no longer sent at all. */
const LAST_SECONDS_MS = 5_000

/** What `RefreshingValue` is told. */
export interface RefreshingValueOptions {
  /** Refresh this long before expiry, so no call is sent with a value about to lapse. @default 300_000 (5 minutes) */
  refreshBeforeMs?: number
  /** The clock, for tests. @default Date.now */
  now?: () => number
}

/**
 * A credential fetched once and reused until shortly before it expires: never fetched per call, and one refresh in
 * flight however many calls wait on it. A refresh that fails rejects the calls waiting on it and is tried again by
 * the next call, so a token endpoint that was down for a moment does not stay down for the gateway.
 */
export class RefreshingValue<T> {
  private current: Expiring<T> | undefined
  private pending: Promise<T> | undefined
  private readonly refreshBeforeMs: number
  private readonly now: () => number

  constructor(
    private readonly fetchValue: () => Promise<Expiring<T>>,
    options: RefreshingValueOptions = {},
  ) {
    this.refreshBeforeMs = options.refreshBeforeMs ?? 300_000
    this.now = options.now ?? Date.now
  }

  /**
   * The value, never expired: the kept one while it lives (a refresh starts in the background once it has less than
   * `refreshBeforeMs` left), else one fetched now.
   */
  get(): Promise<T> | T {
    const current = this.current
    if (current === undefined) return this.refresh()
    if (current.expiresAt === undefined) return current.value
    const left = current.expiresAt - this.now()
    if (left > this.refreshBeforeMs) return current.value
    // A value with seconds left could lapse on its way: fetched anew, never sent.
    if (left <= LAST_SECONDS_MS) return this.refresh()
    // Still good: calls go on with it while one refresh runs; its failure is tried again by the next call.
    this.refresh().catch(() => {})
    return current.value
  }

  /** Forgets the kept value (the upstream refused it), so the next call fetches another. */
  invalidate(): void {
    this.current = undefined
  }

  private refresh(): Promise<T> {
    if (this.pending) return this.pending
    const pending = this.fetchValue().then(
      (fresh) => {
        this.current = fresh
        this.pending = undefined
        return fresh.value
      },
      (error: unknown) => {
        this.pending = undefined
        throw error
      },
    )
    this.pending = pending
    return pending
  }
}
