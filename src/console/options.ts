// `console` checked once at construction: where the page lives, who may open its admin view, and how many days of
// per-day usage it keeps.
import { fail, knownKeys } from '../config/checks.js'
import { isObject } from '../json/value.js'

/** The console: a page under the gateway's mount where each owner sees its kept answers, running calls and usage. */
export interface ConsoleOptions {
  /** Where the page is served, under the gateway's mount (`/ai/console` when mounted at `/ai`). @default '/console' */
  path?: string
  /**
   * Keys that open the admin view: every owner's usage and cost, the models with their upstreams and circuit state,
   * every running call (never a body). They need not be API keys. @default []
   */
  adminKeys?: readonly string[]
  /** How many UTC days of per-owner usage (requests, tokens, cost) the console keeps, today included. @default 30 */
  usageDays?: number
}

/** `console` resolved; undefined when it is off (the default). */
export interface ResolvedConsole {
  /** Starts with `/`, no trailing slash. */
  path: string
  adminKeys: ReadonlySet<string>
  usageDays: number
}

/** The console's defaults (the options reference states the same). */
export const CONSOLE_DEFAULTS = { path: '/console', usageDays: 30 } as const

/** The keys `console` may hold. */
export const CONSOLE_KEYS = ['path', 'adminKeys', 'usageDays'] as const

/** The longest `usageDays`: a year and a day of totals per owner. */
const MAX_USAGE_DAYS = 366

/** Checks `console`; undefined (the default) is off, `{}` is on with the defaults. */
export function resolveConsole(value: unknown): ResolvedConsole | undefined {
  if (value === undefined) return undefined
  if (!isObject(value)) fail('console must be an object { path?, adminKeys?, usageDays? }')
  knownKeys(value, CONSOLE_KEYS, 'console.')
  const path = value.path ?? CONSOLE_DEFAULTS.path
  // One or more plain segments: the page finds the gateway's root by taking this off its own address.
  if (typeof path !== 'string' || !/^(?:\/[\w.-]+)+$/.test(path) || /(?:^|\/)\.\.?(?:\/|$)/.test(path)) {
    fail(`console.path must be a path such as '/console' (segments of letters, digits, . _ -), got ${JSON.stringify(path)}`)
  }
  // An API version segment (`/v1`, and Google's beta beside it) opens the gateway's API paths.
  if (/^\/v\d+[a-z]*(?:\/|$)/.test(path)) fail(`console.path must not lie under the gateway's API paths (/v1…), got '${path}'`)
  const adminKeys = value.adminKeys ?? []
  if (!Array.isArray(adminKeys) || adminKeys.some((key) => typeof key !== 'string' || key.length < 8)) {
    fail('console.adminKeys must be an array of strings of 8 characters or more')
  }
  const usageDays = value.usageDays ?? CONSOLE_DEFAULTS.usageDays
  if (typeof usageDays !== 'number' || !Number.isSafeInteger(usageDays) || usageDays < 1 || usageDays > MAX_USAGE_DAYS) {
    fail(`console.usageDays must be a whole number of days from 1 to ${MAX_USAGE_DAYS}, got ${String(usageDays)}`)
  }
  return { path, adminKeys: new Set(adminKeys as string[]), usageDays }
}
