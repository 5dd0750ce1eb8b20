// The SDK copies the end-to-end tests run against. The newest `openai`, and `@google/genai` 3.x, need Node >= 22:
// they run on the Node 24 leg of CI, and the Node 20 leg runs the newest copies that install there.

/** True on Node 22 and later, where the newest SDK majors run. */
export const ON_NODE_22 = Number(process.versions.node.split('.')[0]) >= 22

/** The `OpenAI` class of the SDK, typed as the 6.x copy (7.x has the same surface the tests use). */
export type OpenAIClass = typeof import('openai').default

/** `[label, load]` for each `openai` copy this Node can run: 6.x everywhere, 7.x on Node >= 22. */
export const OPENAI_SDKS: Array<[string, () => Promise<OpenAIClass>]> = [
  ['openai 6', async () => (await import('openai')).default],
  ...(ON_NODE_22
    ? [['openai 7', async () => (await import('openai-v7')).default as unknown as OpenAIClass] as [string, () => Promise<OpenAIClass>]]
    : []),
]
