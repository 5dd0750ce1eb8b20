// Small pieces both dialects read the same way.

/** A token count as reported, or 0 when it is missing, negative or not a number. */
export function tokenCount(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0
}

/** The key of an `Authorization: Bearer <key>` header. */
export function bearer(header: string | undefined): string | undefined {
  if (!header) return undefined
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match?.[1]
}
