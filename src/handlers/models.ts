import type { ServerResponse } from 'node:http'
import { type Dialect, type ListedModel, servedOperations } from '../dialects/index.js'
import { GatewayError, shown } from '../errors.js'
import { sendJson } from '../http/reply.js'
import type { Runtime } from '../runtime.js'

/** The dialects' model lists (`GET {modelListPath}`) and one model of them: the configured models, no key needed. */
export function modelsHandler(rt: Runtime) {
  const listed: ListedModel[] = [...rt.options.models.values()].map((m) => ({
    id: m.id,
    created: m.created,
    released: m.released,
    ownedBy: m.ownedBy,
    contextWindow: m.contextWindow,
    maxOutputTokens: m.maxOutputTokens,
    operations: servedOperations(m.upstream.dialect),
  }))
  const byId = new Map(listed.map((m) => [m.id, m]))
  // Each format's list is the same every time: built once, on first use.
  const lists = new Map<Dialect, unknown>()
  return {
    models(res: ServerResponse, dialect: Dialect): void {
      let list = lists.get(dialect)
      if (list === undefined) {
        list = dialect.modelList(listed)
        lists.set(dialect, list)
      }
      sendJson(res, 200, list)
    },
    model(res: ServerResponse, dialect: Dialect, id: string): void {
      // Google clients may name a model `models/<id>`, as its resource name reads.
      const model = byId.get(id) ?? (id.startsWith('models/') ? byId.get(id.slice('models/'.length)) : undefined)
      if (!model) throw new GatewayError('model_not_found', `The model '${shown(id)}' does not exist.`, { param: 'model' })
      sendJson(res, 200, dialect.modelObject(model))
    },
  }
}
