/**
 * A `fetch` for protocol clients (the MCP and A2A SDKs) over the SSRF-safe fetcher: every request
 * bounded by one signal (the caller's time budget, joined with any signal the client passes), and
 * every response body cut with an error past `maxBytes` as it streams, so a peer that answers
 * without end costs the limit, not memory. Streams stay streams (an SSE answer is read as it comes).
 */
import type { SafeFetch } from './safe-fetch.ts';

export function cappedFetch(
  fetch: SafeFetch,
  signal: AbortSignal,
  maxBytes: number,
): typeof globalThis.fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : input;
    const response = await fetch(url, {
      ...(init as Parameters<SafeFetch>[1]),
      signal: init?.signal ? AbortSignal.any([signal, init.signal]) : signal,
    });
    if (!response.body) return response as unknown as Response;
    let size = 0;
    const capped = (response.body as ReadableStream<Uint8Array>).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          size += chunk.byteLength;
          if (size > maxBytes) controller.error(new Error(`response larger than ${maxBytes} bytes`));
          else controller.enqueue(chunk);
        },
      }),
    );
    return new Response(capped, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers as unknown as Headers,
    });
  }) as typeof globalThis.fetch;
}
