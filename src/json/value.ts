/** True for a JSON object: not null, not an array. The one test every room reads parsed JSON and options with. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
