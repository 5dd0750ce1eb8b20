/**
 * How the paths of the model calls the client keys, fails over and resumes end: every call of every dialect that
 * generates an answer, streamed as SSE (the client resumes SSE; Bedrock's event-stream calls are left to their SDKs'
 * own retries, which the gateway joins). The client cannot import the gateway's dialect registry (it runs in browsers), so this list is
 * written here and compared with the registry by a test, which fails when a dialect adds a call it does not cover.
 */
export const MODEL_CALL_PATH_ENDINGS: readonly string[] = [
  '/chat/completions',
  '/responses',
  ':generateContent',
  ':streamGenerateContent',
  '/messages',
  ':rawPredict',
  ':streamRawPredict',
]
