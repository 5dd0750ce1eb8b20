// Recorded transcripts: the fixtures each dialect keeps beside its code (src/dialects/<dialect>/__fixtures__/), one
// folder per wire format, read for the hub contract. A transcript is one exchange: `<name>.request.json` (the body the
// client sent), and what came back: `<name>.response.json` (a whole answer), `<name>.error.json` (an error body) and
// `<name>.sse` (the answer streamed, the event-stream text as sent). The folder's `transcripts.json` says, per
// transcript, where the request went and everything the files alone cannot: the status of an error, the field a
// refused request is refused at, and each change a trip through the hub makes, with why (see `Edit`).

import { readdirSync, readFileSync } from 'node:fs'
import { isObject } from '../../../src/json/value.js'

/**
 * How a body comes back from a trip through the hub where it is not as it went, and why: values set and fields
 * removed, each named by its path in the body (`choices[0].message.content`; `[]` stands for every element).
 */
export interface Edit {
  why: string
  set?: Record<string, unknown>
  unset?: string[]
}

/** What a trip through another dialect does to a transcript, where that dialect cannot say all of it. */
export interface Passage {
  /** The other dialect cannot express the request: translating toward it is refused at this field of the client's body. */
  refused?: string
  /** The request as written for the other dialect is one its own clients' format cannot send: reading it back is refused at this field. */
  backRefused?: string
  /** The body the dialect's own upstream format writes, after a trip through the other dialect and back. */
  request?: Edit
  /** The answer (or the streamed answer, assembled) the dialect's own format writes, after the same trip. */
  answer?: Edit
}

/** A transcript as `transcripts.json` describes it. */
export interface Notes {
  /** What the exchange shows, in a few words. */
  about: string
  /** The path the client posted to: it names the operation, and the model for formats that carry it there. */
  path: string
  /** The request is one the hub cannot hold: the client is refused, at this field of its own body. */
  refused?: string
  /** The HTTP status of the error answer. */
  status?: number
  /** The request written back by its own format (where that is also the upstream format). */
  request?: Edit
  /** The answer or error written back by its own format. */
  answer?: Edit
  /** That written answer, read back and written again, where it does not come out the same (an opaque token wrapped again). */
  again?: Edit
  /** By the other dialect's name; or by `<dialect> <operation>` for what calling it through another of its APIs changes too. */
  through?: Record<string, Passage>
}

/** A format folder's `transcripts.json`. */
export interface Manifest {
  /** Fields of this format's answers and errors the hub does not carry: any trip through it drops them. */
  unread?: string[]
  /**
   * Fields this format writes in every answer and error though the hub does not carry them (the members its SDK
   * requires, `null` where unknown): left out of the comparison of a written answer with the upstream's.
   */
  written?: string[]
  /** What a trip through another dialect does to every transcript of this format, by that dialect's name. */
  through?: Record<string, Passage>
  transcripts: Record<string, Notes>
}

/** One transcript, its files read. */
export interface Transcript extends Notes {
  /** The format folder's name and the transcript's. */
  folder: string
  name: string
  unread: string[]
  written: string[]
  body: Record<string, unknown>
  /** The texts of the answer files, as received. */
  response: string | undefined
  error: string | undefined
  sse: string | undefined
}

const PARTS = ['request.json', 'response.json', 'error.json', 'sse'] as const

/** Every transcript under a dialect's fixture folder, and the files there no transcript claims. */
export function loadTranscripts(root: URL): { transcripts: Transcript[]; unclaimed: string[] } {
  const transcripts: Transcript[] = []
  const unclaimed: string[] = []
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) {
      unclaimed.push(entry.name)
      continue
    }
    const folder = new URL(`${entry.name}/`, root)
    const manifest = JSON.parse(readFileSync(new URL('transcripts.json', folder), 'utf8')) as Manifest
    const files = new Set(readdirSync(folder))
    files.delete('transcripts.json')
    const take = (file: string) => {
      if (!files.delete(file)) return undefined
      return readFileSync(new URL(file, folder), 'utf8')
    }
    for (const [name, notes] of Object.entries(manifest.transcripts)) {
      const [request, response, error, sse] = PARTS.map((part) => take(`${name}.${part}`))
      if (request === undefined) throw new Error(`${entry.name}/${name}: a transcript needs its ${name}.request.json`)
      transcripts.push({
        ...notes,
        through: joinPassages(manifest.through, notes.through),
        folder: entry.name,
        name,
        unread: manifest.unread ?? [],
        written: manifest.written ?? [],
        body: JSON.parse(request) as Record<string, unknown>,
        response,
        error,
        sse,
      })
    }
    unclaimed.push(...[...files].map((file) => `${entry.name}/${file}`))
  }
  return { transcripts, unclaimed }
}

/** The folder-wide passages with a transcript's own: both sets of changes apply (the second's refusal first). */
export function joinPassages(all: Record<string, Passage> = {}, own: Record<string, Passage> = {}): Record<string, Passage> {
  const joined: Record<string, Passage> = {}
  for (const name of new Set([...Object.keys(all), ...Object.keys(own)])) {
    const a = all[name] ?? {}
    const b = own[name] ?? {}
    joined[name] = {
      refused: b.refused ?? a.refused,
      backRefused: b.backRefused ?? a.backRefused,
      request: joinEdits(a.request, b.request),
      answer: joinEdits(a.answer, b.answer),
    }
  }
  return joined
}

function joinEdits(a: Edit | undefined, b: Edit | undefined): Edit | undefined {
  if (!a || !b) return a ?? b
  return { why: `${a.why} ${b.why}`, set: { ...a.set, ...b.set }, unset: [...(a.unset ?? []), ...(b.unset ?? [])] }
}

type Step = string | number | '[]'

/** The steps of a field path: member names, element indexes, and `[]` for every element. */
function steps(path: string): Step[] {
  const out: Step[] = []
  for (const match of path.matchAll(/([^.[\]]+)|\[(\d*)\]/g)) {
    if (match[1] !== undefined) out.push(match[1])
    else out.push(match[2] === '' ? '[]' : Number(match[2]))
  }
  return out
}

/** The containers a path's last step is taken in (every element's, for `[]`), and that last step. */
function parents(value: unknown, path: string): { containers: unknown[]; last: Step } {
  const all = steps(path)
  const last = all.pop()
  if (last === undefined || last === '[]') throw new Error(`'${path}' does not end in a field or an index`)
  let containers: unknown[] = [value]
  for (const step of all) {
    containers = containers.flatMap((container): unknown[] => {
      if (step === '[]') return Array.isArray(container) ? container : []
      if (Array.isArray(container) && typeof step === 'number') return step < container.length ? [container[step]] : []
      return isObject(container) && typeof step === 'string' && step in container ? [container[step]] : []
    })
  }
  return { containers, last }
}

/**
 * Makes the objects a path of member names (no indexes) leads through where the value lacks them: a trip through a
 * format that requires a setting (Messages' max_tokens) brings back a settings object the body did not have.
 */
function makeObjects(value: unknown, path: string): void {
  const all = steps(path)
  all.pop()
  if (!all.every((step) => typeof step === 'string' && step !== '[]')) return
  let container = value
  for (const step of all as string[]) {
    if (!isObject(container)) return
    if (!(step in container)) container[step] = {}
    container = container[step]
  }
}

/** A copy of `value` with each edit made in turn; an edit of a field the value does not have is no change. */
export function edited<T>(value: T, ...edits: Array<Edit | undefined>): T {
  const copy = structuredClone(value)
  for (const edit of edits) {
    for (const path of edit?.unset ?? []) {
      const { containers, last } = parents(copy, path)
      for (const container of containers) {
        if (Array.isArray(container) && typeof last === 'number') container.splice(last, 1)
        else if (isObject(container)) delete container[last]
      }
    }
    for (const [path, member] of Object.entries(edit?.set ?? {})) {
      makeObjects(copy, path)
      const { containers, last } = parents(copy, path)
      if (containers.length === 0) throw new Error(`'${path}' is set inside a field the body does not have`)
      for (const container of containers) (container as Record<string | number, unknown>)[last] = structuredClone(member)
    }
  }
  return copy
}

/** The edit that leaves out the fields a format writes of its own, for comparing what it wrote with what it read. */
export function writtenEdit(written: readonly string[]): Edit {
  return { why: 'the format writes these fields whatever the hub carries', unset: [...written] }
}

/** The edit that drops the fields the hub does not carry. */
export function unreadEdit(unread: readonly string[]): Edit {
  return { why: 'the hub does not carry these fields', unset: [...unread] }
}
