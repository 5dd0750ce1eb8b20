// An Express app with the gateway mounted under /ai, built by a function so its test can point it at a mock upstream.
import express from 'express'
import { createGateway } from 'model-gateway'
import { expressMiddleware } from 'model-gateway/express'

/** The app and its gateway; `upstreamUrl` is where the OpenAI-compatible API lives, e.g. https://api.openai.com/v1. */
export function createApp({ upstreamUrl, upstreamKey, clientKeys }) {
  const gateway = createGateway({
    upstreams: { openai: { type: 'openai', baseUrl: upstreamUrl, apiKey: upstreamKey } },
    models: [{ id: 'gpt-4o-mini', upstream: 'openai' }],
    auth: { apiKeys: clientKeys },
  })
  const app = express()
  app.get('/api/hello', (_req, res) => res.json({ hello: 'world' }))
  app.use('/ai', expressMiddleware(gateway))
  return { app, gateway }
}
