// The contract every dialect keeps with the hub, checked over the dialect's recorded transcripts (see
// transcripts.ts). Each dialect runs it once (`<dialect>.contract.test.ts`), and it meets every other dialect
// through the registry, never by name: a new dialect brings its transcripts and one call of `describeHubContract`,
// and the tests grow with the dialects, not with the pairs of them.
//
// For each transcript, through the hub:
// - a request is read and, where its format is also the dialect's upstream format, written back as it was sent
//   (or as its notes say, and why); a request the hub cannot hold is refused naming the field in the client's body;
// - toward every other dialect's upstream the request translates, and comes back from that dialect as it went
//   (or as the notes say), or is refused naming the client's field where that dialect cannot express it;
// - an answer or an error is read and written back as the upstream sent it, less what the hub does not carry;
//   every other dialect's client gets it, and from the ones that can read it back it comes back the same;
// - a stream reaches the client of every dialect, the same however its bytes are cut, as the events whose
//   assembled answer is what that client gets for the whole answer, with the same token counts for the gateway;
//   streamed errors reach every client with their message.
// A dialect whose upstreams can also be called in another of its formats (an API its options pick) has it checked
// the same way: a transcript of that format keeps its answers in it, and every other dialect's request translates
// for it and comes back as it went.

import { describe, expect, it } from 'vitest'
import {
  assembledAnswer,
  DIALECTS,
  type Dialect,
  type DialectName,
  MODEL_ROUTES,
  translatorFor,
  type UpstreamOptionValues,
  upstreamApi,
} from '../../../src/dialects/index.js'
import { matchRequest } from '../../../src/http/router.js'
import { SseReader } from '../../../src/sse/reader.js'
import type { ClientFormat, UpstreamFormat, WireFormat } from '../../../src/translate/format.js'
import type { HubStreamEvent } from '../../../src/translate/hub.js'
import { type CallInfo, type CallPlan, joinFormats, type Translated } from '../../../src/translate/index.js'
import type { Operation } from '../../../src/types.js'
import { ok } from './helpers.js'
import { edited, joinPassages, loadTranscripts, type Transcript, unreadEdit, writtenEdit } from './transcripts.js'

/** What a dialect's contract runs on: its formats, as the registry must also list them, and its fixture folder. */
export interface HubContractOptions {
  /** The formats the dialect's clients speak through the hub. */
  clientFormats: readonly ClientFormat[]
  /** The format the dialect's upstreams are called in. */
  upstreamFormat: UpstreamFormat
  /** The option values that pick each other API its upstreams can be called in (`{ api: 'responses' }`). @default none */
  otherUpstreams?: readonly UpstreamOptionValues[]
  /** The dialect's `__fixtures__` folder: one folder per format, each with its `transcripts.json`. */
  fixtures: URL
}

/** A client format the gateway serves, with its dialect and the operation a client calls it by. */
interface Client {
  dialect: Dialect
  operation: Operation
  format: ClientFormat
}

const CLIENTS: Client[] = []
for (const route of MODEL_ROUTES) {
  const format = route.format.hub
  if (format && !CLIENTS.some((client) => client.format === format)) {
    CLIENTS.push({ dialect: route.dialect, operation: route.format.operation, format })
  }
}

const named = (client: Client) => `${client.dialect.name} ${client.operation}`

/** A dialect's upstream format where its clients speak it too: the format that reads back what it writes. */
function wireOf(dialect: Dialect): (Client & { format: WireFormat }) | undefined {
  const client = CLIENTS.find((c) => c.dialect === dialect && (c.format as object) === dialect.upstreamFormat)
  return client as (Client & { format: WireFormat }) | undefined
}

/** A client format that also writes the calls of other dialects' clients, as an upstream's API can be asked to. */
const isWire = (format: ClientFormat): format is WireFormat => 'requestFromHub' in format

/**
 * Every format an upstream of `dialect` can be called in: its default, then each other format of its clients that
 * can also be an upstream's (another API its options pick), with the client of that format.
 */
function upstreamsOf(dialect: Dialect): Array<{ format: UpstreamFormat; client: Client | undefined }> {
  const own = CLIENTS.filter((c) => c.dialect === dialect)
  const others = own.filter((c) => isWire(c.format) && (c.format as object) !== dialect.upstreamFormat)
  return [
    { format: dialect.upstreamFormat, client: wireOf(dialect) },
    ...others.map((client) => ({ format: client.format as WireFormat, client })),
  ]
}

/** The `data` of each event of an event-stream text. */
function sseData(text: string): string[] {
  const reader = new SseReader()
  return [...reader.push(text), ...reader.end()]
}

/** The call a transcript's request makes, as the router and its operation read it. */
function callOf(transcript: Transcript): { client: Client; call: CallInfo } {
  const match = matchRequest('POST', transcript.path, false)
  if (match?.route.kind !== 'call') throw new Error(`${transcript.folder}/${transcript.name}: '${transcript.path}' is no model call`)
  const { route, target } = match.route
  const client = CLIENTS.find((c) => c.format === route.format.hub)
  if (!client) throw new Error(`${transcript.folder}/${transcript.name}: '${transcript.path}' is not translated through the hub`)
  const { model, stream } = route.format.read(transcript.body, target)
  return { client, call: { model, upstreamModel: model, stream, requestId: 'req1', created: 1_700_000_000 } }
}

/** The plan a client of another format gets the transcript's answer with: its own request is not the transcript's. */
function planFor(plan: CallPlan, stream: boolean): CallPlan {
  return { ...plan, stream, includeUsage: true, request: {} }
}

/** A plan for answers that need none of a request's settings. */
const PLAN: CallPlan = {
  model: 'client-model',
  upstreamModel: 'upstream-model',
  stream: false,
  includeUsage: true,
  requestId: 'req1',
  created: 1_700_000_000,
  request: {},
}

/** The answer's text, as the pipeline holds it: bytes. */
const bytes = (text: string) => Buffer.from(text, 'utf8')

/** A refusal of `field`, whose message names it (or the part of the body it lies in). */
function expectRefusal(result: Translated<unknown>, field: string): void {
  expect(result).toMatchObject({ ok: false, field })
  if (result.ok) return
  const quoted = [...result.message.matchAll(/'([^']+)'/g)].map((match) => match[1] as string)
  expect(quoted.some((path) => field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`))).toBe(true)
}

/** Runs the contract for the dialect called `name` over its transcripts. */
export function describeHubContract(name: DialectName, options: HubContractOptions): void {
  const found = DIALECTS.find((d) => d.name === name)
  if (!found) throw new Error(`no dialect '${name}' in the registry`)
  const dialect: Dialect = found
  const upstream = options.upstreamFormat
  const wire = wireOf(dialect)
  // A dialect that speaks another's formats on its own paths (Azure: OpenAI's) is that one's contract, not one more.
  const others = DIALECTS.filter((other) => other !== dialect && other.speaks === undefined)
  const { transcripts, unclaimed } = loadTranscripts(options.fixtures)
  const upstreams = upstreamsOf(dialect)

  describe(`the ${name} dialect through the hub`, () => {
    it('has the formats the registry serves it with, and no translator between them (same-dialect calls pass through)', () => {
      expect(dialect.upstreamFormat).toBe(upstream)
      expect(new Set(CLIENTS.filter((c) => c.dialect === dialect).map((c) => c.format))).toEqual(new Set(options.clientFormats))
      for (const client of CLIENTS.filter((c) => c.dialect === dialect)) {
        expect(translatorFor(dialect, dialect, client.operation)).toBeUndefined()
        for (const other of others) expect(translatorFor(dialect, other, client.operation)).toBeDefined()
      }
    })

    it('can be called in every format its options pick, and in none other', () => {
      const picked = (options.otherUpstreams ?? []).map((values) => upstreamApi(dialect, values).format)
      expect(new Set(upstreams.map((u) => u.format))).toEqual(new Set([upstream, ...picked]))
    })

    it('keeps no fixture file that no transcript describes', () => {
      expect(unclaimed).toEqual([])
    })

    it("fails an upstream answer that is not its format, for every dialect's client", () => {
      for (const client of CLIENTS) {
        for (const { format } of upstreams) {
          expect(joinFormats(client.format, format).response(bytes('not json'), PLAN)).toMatchObject({ ok: false, field: '' })
        }
      }
    })

    for (const transcript of transcripts) {
      describe(`${transcript.folder}/${transcript.name}: ${transcript.about}`, () => {
        const { client, call } = callOf(transcript)
        const translate = joinFormats(client.format, upstream)
        /** The transcript's own call, its request translated for the dialect's own upstream format. */
        const direct = () => ok(translate.request(transcript.body, call))
        const passage = (other: Dialect) => transcript.through?.[other.name] ?? {}
        // A transcript of a format its upstreams can also be called in keeps its answers in that format.
        const mine = upstreams.find((u) => u.client === client && (u.format as object) !== upstream)
        const up = mine?.format ?? upstream
        const own = mine?.client ?? wire
        /** The transcript's own call, written for an upstream called in the format its answers are in. */
        const sent = () => ok(joinFormats(client.format, up).request(transcript.body, call))

        if (transcript.refused !== undefined) {
          const field = transcript.refused
          it(`refuses '${field}', naming the field in the client's body, toward every upstream`, () => {
            expectRefusal(translate.request(transcript.body, call), field)
            for (const other of others) {
              for (const { format, client: theirs } of upstreamsOf(other)) {
                const api = { format, operation: theirs?.operation ?? other.translatedOperation }
                expectRefusal(
                  translatorFor(dialect, other, client.operation, api)?.request(transcript.body, call) as Translated<unknown>,
                  field,
                )
              }
            }
          })
          return
        }

        if (client === wire) {
          it('reads the request into the hub and writes it back as sent', () => {
            const { body, plan } = direct()
            expect(body).toEqual(edited(transcript.body, transcript.request))
            // The same hub, but for the hints the first reading dropped (and named): they are not written back. A
            // cache breakpoint is named by the reader until a writer places it: those placed are read back so again.
            const hub = client.format.requestToHub(transcript.body)
            const placed = hub.dropped.filter((path) => !(plan.dropped ?? []).includes(path))
            expect(client.format.requestToHub(body as Record<string, unknown>)).toEqual({ ...hub, dropped: placed })
          })
        } else {
          it('reads the request into the hub', () => {
            expect(direct().body).toBeTypeOf('object')
          })
        }
        if (mine) {
          // An upstream's writer spells the request its own way (items for a string input, no stored state): what it
          // must keep is the hub the client's body held, and its own spelling.
          it('writes the request for an upstream called in its format as the same hub, and writes that again the same', () => {
            // What a client may not ask of the gateway (`store`) the upstream is told: read back, it is dropped again.
            const hub = client.format.requestToHub(transcript.body)
            expect({ ...client.format.requestToHub(sent().body as Record<string, unknown>), dropped: [] }).toEqual({ ...hub, dropped: [] })
            expect(ok(joinFormats(client.format, up).request(sent().body as Record<string, unknown>, call)).body).toEqual(sent().body)
          })
        }

        for (const other of others) {
          const refused = passage(other).refused
          if (refused !== undefined) {
            it(`refuses '${refused}' toward an upstream of ${other.name}, which cannot express it`, () => {
              expectRefusal(translatorFor(dialect, other, client.operation)?.request(transcript.body, call) as Translated<unknown>, refused)
            })
            continue
          }
          const back = wireOf(other) ? ', and it comes back as it went' : ''
          it(`translates the request for an upstream of ${other.name}${back}`, () => {
            const there = ok(
              translatorFor(dialect, other, client.operation)?.request(transcript.body, call) as Translated<{ body: object }>,
            )
            const theirs = wireOf(other)
            if (!theirs) return
            const { body, plan } = direct()
            const back = upstream.requestFromHub(theirs.format.requestToHub(there.body as Record<string, unknown>), plan)
            expect(back).toEqual(edited(body, passage(other).request))
          })
        }

        const ownFormat = () => wireFormat(own)

        for (const other of others) {
          for (const { format, client: theirs } of upstreamsOf(other).slice(1)) {
            if (!theirs || !isWire(theirs.format)) continue
            const reader = theirs.format
            const api = { format, operation: theirs.operation }
            const toward = () =>
              translatorFor(dialect, other, client.operation, api)?.request(transcript.body, call) as Translated<{ body: object }>
            // Notes under `<dialect> <operation>` say what this API changes beyond what the dialect's default does.
            const via = joinPassages({ a: passage(other) }, { a: transcript.through?.[named(theirs)] ?? {} }).a ?? {}
            const refused = via.refused
            if (refused !== undefined) {
              it(`refuses '${refused}' toward an upstream of ${other.name} called as ${named(theirs)}, which cannot express it`, () => {
                expectRefusal(toward(), refused)
              })
              continue
            }
            it(`translates the request for an upstream of ${other.name} called as ${named(theirs)}, and it comes back as it went`, () => {
              const there = ok(toward())
              if (via.backRefused !== undefined) {
                expect(() => reader.requestToHub(there.body as Record<string, unknown>)).toThrow(`'${via.backRefused}'`)
                return
              }
              const { body, plan } = direct()
              const back = upstream.requestFromHub(reader.requestToHub(there.body as Record<string, unknown>), plan)
              expect(back).toEqual(edited(body, via.request))
            })
          }
        }

        if (transcript.response !== undefined) describeAnswer(transcript, transcript.response)
        if (transcript.error !== undefined) describeError(transcript, transcript.error)
        if (transcript.sse !== undefined) describeStream(transcript, transcript.sse)

        function describeAnswer(t: Transcript, text: string): void {
          const answer: unknown = JSON.parse(text)
          /** The answer as the dialect's own format writes it, for a client of the transcript's call. */
          const written = () => ok(joinFormats(ownFormat(), up).response(bytes(text), sent().plan))

          it('reads the answer into the hub and writes it back as the upstream sent it, less what the hub does not carry', () => {
            const own = writtenEdit(t.written)
            expect(edited(written(), own)).toEqual(edited(answer, unreadEdit(t.unread), t.answer, own))
            // What the format writes, it writes again the same, but for opaque tokens it wraps again (and the notes say so).
            expect(ok(joinFormats(ownFormat(), up).response(written(), sent().plan))).toEqual(edited(written(), t.again))
          })

          for (const other of CLIENTS.filter((c) => c.dialect !== dialect)) {
            const back = wireOf(other.dialect) === other
            it(`answers a client of ${named(other)}${back ? ', and the answer comes back from it as it went' : ''}`, () => {
              const plan = planFor(sent().plan, false)
              const out = ok(joinFormats(other.format, up).response(bytes(text), plan))
              if (!back) return
              const hub = other.dialect.upstreamFormat.responseToHub(out, plan)
              const again = ownFormat().responseFromHub(hub, sent().plan)
              expect(again).toEqual(edited(written(), passage(other.dialect).answer))
            })
          }
        }

        function describeError(t: Transcript, text: string): void {
          const status = t.status ?? expect.fail(`${t.folder}/${t.name}: an error needs its status`)
          const message = up.errorToHub(JSON.parse(text)).message
          it(`writes the error back as the upstream sent it (status ${status}), less what the hub does not carry`, () => {
            const own = writtenEdit(t.written)
            expect(edited(joinFormats(ownFormat(), up).error(status, bytes(text)), own)).toEqual(
              edited(JSON.parse(text), unreadEdit(t.unread), t.answer, own),
            )
          })
          for (const other of CLIENTS.filter((c) => c.dialect !== dialect)) {
            it(`gives a client of ${named(other)} the error's message`, () => {
              const out = joinFormats(other.format, up).error(status, bytes(text))
              expect(other.dialect.upstreamFormat.errorToHub(out).message).toBe(message)
            })
          }
        }

        function describeStream(t: Transcript, sse: string): void {
          const data = sseData(sse)
          const plan = () => planFor(sent().plan, true)
          const whole = (client: ClientFormat) => ok(joinFormats(client, up).response(bytes(t.response as string), plan()))
          /** The errors the upstream's stream carries: a stream without a whole answer is one that broke off with one. */
          const errors = () => {
            const decoder = up.streamDecoder(plan())
            const found = data
              .flatMap((event) => decoder.event(event))
              .filter((e): e is HubStreamEvent & { type: 'error' } => e.type === 'error')
            if (t.response === undefined) expect(found).not.toEqual([])
            return found
          }

          if (t.response !== undefined && own) {
            it('assembles, as the upstream sent it, into its whole answer', () => {
              // A format that assembles its stream from the events themselves keeps every member the upstream sent;
              // one assembled through the hub gives what the hub carries, as a whole answer through it does.
              const expected = own.format.assembleStream ? JSON.parse(t.response as string) : whole(own.format)
              expect(assembledAnswer(own.operation, data, plan())).toEqual(expected)
            })
          }

          for (const to of CLIENTS) {
            const what = t.response === undefined ? 'its events' : 'the events of its whole answer'
            it(`streams to a client of ${named(to)} ${what}, however the upstream's bytes are cut`, () => {
              const translator = joinFormats(to.format, up).stream(plan())
              const out = translator.write(sse) + translator.end()
              const raw = bytes(sse)
              for (const size of [1, 7, 64]) {
                const cut = joinFormats(to.format, up).stream(plan())
                let text = ''
                for (let i = 0; i < raw.length; i += size) text += cut.write(raw.subarray(i, i + size))
                expect(text + cut.end()).toBe(out)
              }
              for (const error of errors()) expect(out).toContain(JSON.stringify(error.error.message).slice(1, -1))
              if (t.response === undefined) return
              expect(assembledAnswer(to.operation, sseData(out), plan())).toEqual(whole(to.format))
              expect(translator.usage()).toEqual(dialect.usage(JSON.parse(t.response)))
            })
          }

          if (t.response === undefined || !own) return
          for (const other of others) {
            const theirs = wireOf(other)
            if (!theirs) continue
            it(`streams through a client of ${named(theirs)} and back as its whole answer`, () => {
              const there = joinFormats(theirs.format, up).stream(plan())
              const back = joinFormats(own.format, other.upstreamFormat).stream(plan())
              const out = back.write(there.write(sse) + there.end()) + back.end()
              expect(assembledAnswer(own.operation, sseData(out), plan())).toEqual(edited(whole(own.format), passage(other).answer))
            })
          }
        }
      })
    }
  })

  /** An upstream format of the dialect as its clients speak it: where answers are read back and written again. */
  function wireFormat(client: Client | undefined): WireFormat {
    if (!client || !isWire(client.format))
      throw new Error(`the ${name} upstream format is no client format: its answers cannot be written back`)
    return client.format
  }
}
