/**
 * The JSON body reader in process (issue 28 item 7): nanoseconds per body of `parseJsonBody` - the
 * fatal UTF-8 decode, `JSON.parse` and the pass for repeated names and lone surrogates - beside what
 * the adapters did before it (Node's replacing decode and `JSON.parse`), on the hot paths' bodies.
 */
import { parseJsonBody } from '../servers/json-body.ts';

export interface JsonBodyCost {
  name: string;
  bytes: number;
  strictNs: number;
  lenientNs: number;
}

/** Median over five runs of `calls` calls, after a warm-up: nanoseconds per call. */
function nsPerCall(call: () => unknown, calls: number): number {
  let sink: unknown;
  for (let i = 0; i < calls / 4; i++) sink = call();
  const runs: number[] = [];
  for (let run = 0; run < 5; run++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) sink = call();
    runs.push(Number(process.hrtime.bigint() - start) / calls);
  }
  if (sink === undefined) throw new Error('nothing parsed');
  return runs.sort((a, b) => a - b)[2] as number;
}

export function measureJsonBodies(bodies: Record<string, string>, calls = 200_000): JsonBodyCost[] {
  return Object.entries(bodies).map(([name, text]) => {
    const bytes = Buffer.from(text);
    return {
      name,
      bytes: bytes.length,
      strictNs: nsPerCall(() => parseJsonBody(bytes), calls),
      lenientNs: nsPerCall(() => JSON.parse(bytes.toString('utf8')), calls),
    };
  });
}
