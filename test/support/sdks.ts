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

/** What the tests use of the Vercel `ai` SDK and its OpenAI provider, typed as the 6.x and 3.x copies. */
export interface VercelAi {
  generateText: typeof import('ai').generateText
  streamText: typeof import('ai').streamText
  createOpenAI: typeof import('@ai-sdk/openai').createOpenAI
}

/** `[label, load]` for each Vercel `ai` copy this Node can run: ai 6 with @ai-sdk/openai 3 everywhere, ai 7 with 4 on Node >= 22. */
export const VERCEL_AI_SDKS: Array<[string, () => Promise<VercelAi>]> = [
  [
    'ai 6',
    async () => {
      const [ai, provider] = await Promise.all([import('ai'), import('@ai-sdk/openai')])
      return { generateText: ai.generateText, streamText: ai.streamText, createOpenAI: provider.createOpenAI }
    },
  ],
  ...(ON_NODE_22
    ? [
        [
          'ai 7',
          async () => {
            const [ai, provider] = await Promise.all([import('ai-v7'), import('ai-sdk-openai-v4')])
            // The 7.x copies have the surface the tests use; their types differ in details the tests never touch.
            return {
              generateText: ai.generateText as unknown as VercelAi['generateText'],
              streamText: ai.streamText as unknown as VercelAi['streamText'],
              createOpenAI: provider.createOpenAI as unknown as VercelAi['createOpenAI'],
            }
          },
        ] as [string, () => Promise<VercelAi>],
      ]
    : []),
]
