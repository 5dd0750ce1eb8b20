/** The two request formats the gateway speaks. */
export type Endpoint = 'chat.completions' | 'generateContent'

/** One recovery record as list and lookup return it: never the bodies. */
export interface RecoverySummary {
  request_id: string
  /** Unix seconds. */
  created_at: number
  interrupted_reason: string
  request_body_hash: string
}

/** One recovery record in full, as `GET /v1/recoveries/{request_id}` returns it. */
export interface RecoveryRecord extends RecoverySummary {
  request: {
    /** The request body as received, or `__OMITTED_TOO_LARGE__`. */
    body_raw: string
    request_body_hash: string
    /** The gateway path the request was sent to, e.g. `/v1/chat/completions`. */
    path: string
    endpoint: Endpoint
    /** The model id the client asked for. */
    model: string
  }
  response: {
    body_raw: string
    /** Byte length of `body_raw` in UTF-8. */
    response_body_size: number
    status: number
    content_type: string
  }
}

/** Text stored in place of a request body above `recovery.maxStoredRequestBytes`. */
export const OMITTED_TOO_LARGE = '__OMITTED_TOO_LARGE__'
