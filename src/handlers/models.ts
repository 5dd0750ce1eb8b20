import type { ServerResponse } from 'node:http'
import { sendJson } from '../http/reply.js'
import type { Runtime } from '../runtime.js'

/** `GET /v1/models`: the configured models, computed once; no key needed. */
export function modelsHandler(rt: Runtime): (res: ServerResponse) => void {
  const list = {
    object: 'list',
    data: [...rt.options.models.values()].map((m) => ({ id: m.id, object: 'model', created: m.created, owned_by: m.ownedBy })),
  }
  return (res) => sendJson(res, 200, list)
}
