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

import { describe, expect, it } from 'vitest'
import { assembledAnswer, DIALECTS, type Dialect, type DialectName, MODEL_ROUTES, translatorFor } from '../../../src/dialects/index.js'
import { matchRequest } from '../../../src/http/router.js'
import { SseReader } from '../../../src/sse/reader.js'
import type { ClientFormat, UpstreamFormat, WireFormat } from '../../../src/translate/format.js'
import type { HubStreamEvent } from '../../../src/translate/hub.js'
import { type CallInfo, type CallPlan, joinFormats, type Translated } from '../../../src/translate/index.js'
import type { Operation } from '../../../src/types.js'
import { ok } from './helpers.js'
import { edited, loadTranscripts, type Transcript, unreadEdit } from './transcripts.js'

/** What a dialect's contract runs on: its formats, as the registry must also list them, and its fixture folder. */
export interface HubContractOptions {
  /** The formats the dialect's clients speak through the hub. */
  clientFormats: readonly ClientFormat[]
  /** The format the dialect's upstreams are called in. */
  upstreamFormat: UpstreamFormat
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
  const others = DIALECTS.filter((other) => other !== dialect)
  const { transcripts, unclaimed } = loadTranscripts(options.fixtures)

  describe(`the ${name} dialect through the hub`, () => {
    it('has the formats the registry serves it with, and no translator between them (same-dialect calls pass through)', () => {
      expect(dialect.upstreamFormat).toBe(upstream)
      expect(new Set(CLIENTS.filter((c) => c.dialect === dialect).map((c) => c.format))).toEqual(new Set(options.clientFormats))
      for (const client of CLIENTS.filter((c) => c.dialect === dialect)) {
        expect(translatorFor(dialect, dialect, client.operation)).toBeUndefined()
        for (const other of others) expect(translatorFor(dialect, other, client.operation)).toBeDefined()
      }
    })

    it('keeps no fixture file that no transcript describes', () => {
      expect(unclaimed).toEqual([])
    })

    it("fails an upstream answer that is not its format, for every dialect's client", () => {
      for (const client of CLIENTS) {
        expect(joinFormats(client.format, upstream).response(bytes('not json'), PLAN)).toMatchObject({ ok: false, field: '' })
      }
    })

    for (const transcript of transcripts) {
      describe(`${transcript.folder}/${transcript.name}: ${transcript.about}`, () => {
        const { client, call } = callOf(transcript)
        const translate = joinFormats(client.format, upstream)
        /** The transcript's own call, its request translated for the dialect's own upstream format. */
        const direct = () => ok(translate.request(transcript.body, call))
        const passage = (other: Dialect) => transcript.through?.[other.name] ?? {}

        if (transcript.refused !== undefined) {
          const field = transcript.refused
          it(`refuses '${field}', naming the field in the client's body, toward every upstream`, () => {
            expectRefusal(translate.request(transcript.body, call), field)
            for (const other of others) {
              expectRefusal(translatorFor(dialect, other, client.operation)?.request(transcript.body, call) as Translated<unknown>, field)
            }
          })
          return
        }

        if (client === wire) {
          it('reads the request into the hub and writes it back as sent', () => {
            const { body } = direct()
            expect(body).toEqual(edited(transcript.body, transcript.request))
            // The same hub, but for the hints the first reading dropped (and named): they are not written back.
            const hub = client.format.requestToHub(transcript.body)
            expect(client.format.requestToHub(body as Record<string, unknown>)).toEqual({ ...hub, dropped: [] })
          })
        } else {
          it('reads the request into the hub', () => {
            expect(direct().body).toBeTypeOf('object')
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

        if (transcript.response !== undefined) describeAnswer(transcript, transcript.response)
        if (transcript.error !== undefined) describeError(transcript, transcript.error)
        if (transcript.sse !== undefined) describeStream(transcript, transcript.sse)

        function describeAnswer(t: Transcript, text: string): void {
          const answer: unknown = JSON.parse(text)
          /** The answer as the dialect's own format writes it, for a client of the transcript's call. */
          const written = () => ok(joinFormats(wireFormat(), upstream).response(bytes(text), direct().plan))

          it('reads the answer into the hub and writes it back as the upstream sent it, less what the hub does not carry', () => {
            expect(written()).toEqual(edited(answer, unreadEdit(t.unread), t.answer))
            // What the format writes, it writes again the same.
            expect(ok(joinFormats(wireFormat(), upstream).response(written(), direct().plan))).toEqual(written())
          })

          for (const other of CLIENTS.filter((c) => c.dialect !== dialect)) {
            const back = wireOf(other.dialect) === other
            it(`answers a client of ${named(other)}${back ? ', and the answer comes back from it as it went' : ''}`, () => {
              const plan = planFor(direct().plan, false)
              const out = ok(joinFormats(other.format, upstream).response(bytes(text), plan))
              if (!back) return
              const hub = other.dialect.upstreamFormat.responseToHub(out, plan)
              const again = wireFormat().responseFromHub(hub, direct().plan)
              expect(again).toEqual(edited(written(), passage(other.dialect).answer))
            })
          }
        }

        function describeError(t: Transcript, text: string): void {
          const status = t.status ?? expect.fail(`${t.folder}/${t.name}: an error needs its status`)
          const message = upstream.errorToHub(JSON.parse(text)).message
          it(`writes the error back as the upstream sent it (status ${status}), less what the hub does not carry`, () => {
            expect(joinFormats(wireFormat(), upstream).error(status, bytes(text))).toEqual(
              edited(JSON.parse(text), unreadEdit(t.unread), t.answer),
            )
          })
          for (const other of CLIENTS.filter((c) => c.dialect !== dialect)) {
            it(`gives a client of ${named(other)} the error's message`, () => {
              const out = joinFormats(other.format, upstream).error(status, bytes(text))
              expect(other.dialect.upstreamFormat.errorToHub(out).message).toBe(message)
            })
          }
        }

        function describeStream(t: Transcript, sse: string): void {
          const data = sseData(sse)
          const plan = () => planFor(direct().plan, true)
          const whole = (client: ClientFormat) => ok(joinFormats(client, upstream).response(bytes(t.response as string), plan()))
          /** The errors the upstream's stream carries: a stream without a whole answer is one that broke off with one. */
          const errors = () => {
            const decoder = upstream.streamDecoder(plan())
            const found = data
              .flatMap((event) => decoder.event(event))
              .filter((e): e is HubStreamEvent & { type: 'error' } => e.type === 'error')
            if (t.response === undefined) expect(found).not.toEqual([])
            return found
          }

          if (t.response !== undefined && wire) {
            it('assembles, as the upstream sent it, into its whole answer', () => {
              // A format that assembles its stream from the events themselves keeps every member the upstream sent;
              // one assembled through the hub gives what the hub carries, as a whole answer through it does.
              const expected = wire.format.assembleStream ? JSON.parse(t.response as string) : whole(wire.format)
              expect(assembledAnswer(wire.operation, data, plan())).toEqual(expected)
            })
          }

          for (const to of CLIENTS) {
            const what = t.response === undefined ? 'its events' : 'the events of its whole answer'
            it(`streams to a client of ${named(to)} ${what}, however the upstream's bytes are cut`, () => {
              const translator = joinFormats(to.format, upstream).stream(plan())
              const out = translator.write(sse) + translator.end()
              const raw = bytes(sse)
              for (const size of [1, 7, 64]) {
                const cut = joinFormats(to.format, upstream).stream(plan())
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

          if (t.response === undefined || !wire) return
          for (const other of others) {
            const theirs = wireOf(other)
            if (!theirs) continue
            it(`streams through a client of ${named(theirs)} and back as its whole answer`, () => {
              const there = joinFormats(theirs.format, upstream).stream(plan())
              const back = joinFormats(wire.format, other.upstreamFormat).stream(plan())
              const out = back.write(there.write(sse) + there.end()) + back.end()
              expect(assembledAnswer(wire.operation, sseData(out), plan())).toEqual(edited(whole(wire.format), passage(other).answer))
            })
          }
        }
      })
    }
  })

  /** The dialect's upstream format as its clients speak it: where answers are read back and written again. */
  function wireFormat(): WireFormat {
    if (!wire) throw new Error(`the ${name} upstream format is no client format: its answers cannot be written back`)
    return wire.format
  }
}
