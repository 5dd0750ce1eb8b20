/** The wire formats the gateway speaks, to clients and to upstreams alike. */
export type DialectName = 'openai' | 'gemini'

/** Every dialect name, in the order the registry lists them. */
export const DIALECT_NAMES: readonly DialectName[] = ['openai', 'gemini']
