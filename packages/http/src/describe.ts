// The same function as @pkg/ws-protocol's src/describe.ts, copied on purpose: the package graph
// (tools/scripts/check-graph.mjs) lets neither package import the other, and the one
// package both may use, @pkg/logger, is a types-only edge for both. Change both together.

/**
 * How a value is named in an error message: `null`, `an array`, `a Map`, `a string`... so
 * that a message says what was received without printing the value itself.
 */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') {
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' && name !== 'Object' ? `a ${name}` : 'an object';
  }
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}
