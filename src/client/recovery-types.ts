// The Recoveries API's records as the client reads them. The client entry imports nothing from outside src/client/,
// so these mirror the gateway's own types (a contract test keeps them in step).

/** One kept record without its bodies: an item of `list` and `lookup`. */
export interface RecoverySummary {
  /** The id of the interrupted call; what `get` and `delete` take. */
  request_id: string
  /** When the record was kept, Unix seconds. */
  created_at: number
  /** Why the call's answer was not delivered (e.g. `context canceled`). */
  interrupted_reason: string
  /** 16 lowercase hex characters: the hash of the request body, as `lookup` matches it. */
  request_body_hash: string
}

/** A kept record with the request and the whole answer: what `get` returns. */
export interface RecoveryRecord extends RecoverySummary {
  request: {
    /** The request body as received, or `__OMITTED_TOO_LARGE__` for a body over the stored limit. */
    body_raw: string
    request_body_hash: string
    /** The gateway path the call was sent to, e.g. `/v1/chat/completions`. */
    path: string
    /** The operation of the call, e.g. `chat.completions`. */
    endpoint: string
    /** The model id the client asked for. */
    model: string
  }
  response: {
    /** The whole answer as the client would have got it (a streamed one assembled into its whole form). */
    body_raw: string
    /** Byte length of `body_raw` in UTF-8. */
    response_body_size: number
    status: number
    content_type: string
    /** A streamed answer's events exactly as relayed. */
    stream_raw?: string
  }
  /**
   * When the answer was first served again to a repeat of the call (a replay of its `Idempotency-Key`, or an SDK
   * retry), Unix seconds: the answer reached a client after all, so it is not lost. Absent while it was not.
   */
  served_again_at?: number
}

/** What `list` returns: every record, or one page of them with `has_more`. */
export interface RecoveryList {
  /** How many items this answer holds. */
  count: number
  /** Newest first. */
  items: RecoverySummary[]
  /** Present for a page (`limit` or `after` given): whether older records follow. */
  has_more?: boolean
}

/** A page of `list`: at most `limit` items (1..1000), those after the record `after` (newest first). */
export interface RecoveryListParams {
  limit?: number
  /** The `request_id` of the last item of the previous page. */
  after?: string
}

/** What `delete` returns; `deleted` is false (reason `RECOVERY_NOT_FOUND`) when there was no such record. */
export interface RecoveryDeleteResult {
  request_id: string
  deleted: boolean
  message: string
  /** `OK`, or `RECOVERY_NOT_FOUND`. */
  reason: string
}

/** What `deleteAll` returns; `would_delete` only for a dry run. */
export interface RecoveryDeleteAllResult {
  deleted: number
  would_delete?: number
  message: string
  /** `OK`, or `DRY_RUN`. */
  reason: string
}

/** What `recover` found: the kept answer of the call, parsed, with the record it came from. */
export interface RecoveredAnswer<T = unknown> {
  /** The record's id, to delete it once the answer is safely used. */
  requestId: string
  /** The answer the client would have got (`response.body_raw` parsed as JSON). */
  answer: T
  /** The whole record. */
  record: RecoveryRecord
}
