/**
 * JSON text of operation outputs for the adapters. An output the operation layer returns frozen
 * (a cached answer served again, whose contract it checked once: `runHandler`) never changes, so its
 * text is made once and kept for as long as the output is.
 */
const texts = new WeakMap<object, string>();

export function jsonOf(value: unknown): string {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value);
  let text = texts.get(value);
  if (text === undefined) {
    text = JSON.stringify(value);
    texts.set(value, text);
  }
  return text;
}
