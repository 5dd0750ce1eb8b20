// Thinking budgets toward Gemini: each effort's budget, and the most each model takes (it refuses a budget above).
import { clamp, type HubEffort, type HubReasoning, type HubRequest } from '../../../translate/hub.js'

/** Google's documented thinking budgets for each effort (its OpenAI-compatibility table; `xhigh` is the largest budget). */
const BUDGET: Readonly<Record<HubEffort, number>> = {
  none: 0,
  minimal: 1024,
  low: 1024,
  medium: 8192,
  high: 24576,
  xhigh: 32768,
  max: 32768,
}

/** The largest budget each model takes, by its name's start (Google's thinking guide); others are not lowered. */
const MAX_BUDGET: readonly [RegExp, number][] = [
  [/^(models\/)?gemini-2\.5-pro/, 32768],
  // Flash-Lite too.
  [/^(models\/)?gemini-2\.5-flash/, 24576],
]

/** The most `model` thinks, or undefined when the gateway does not know it. */
export const maxBudgetOf = (model: string): number | undefined => MAX_BUDGET.find(([name]) => name.test(model))?.[1]

/**
 * The `thinkingBudget` for the hub's reasoning on `model`: a budget above the model's maximum is lowered to it and
 * named (`HubRequest.clamped`), an effort's budget is the most the model takes. -1 leaves it to the model.
 */
export function thinkingBudget(hub: HubRequest, reasoning: HubReasoning, model: string): number {
  const max = maxBudgetOf(model) ?? Number.POSITIVE_INFINITY
  if ('effort' in reasoning) return Math.min(BUDGET[reasoning.effort], max)
  if (reasoning.budget <= max) return reasoning.budget
  clamp(hub, 'reasoning', max)
  return max
}
