/**
 * Bytes a request allocates on the server's JavaScript heap, through the server's inspector (it runs
 * with `--inspect` on a loopback port): V8's sampling heap profiler, keeping the samples of objects
 * the collector already freed, over a fixed number of requests. Unlike a rate, which swings by tens
 * of percent on a shared host, this repeats within about 1% from run to run, so a change that
 * makes a hot path allocate more shows even when its rate is lost in the noise. It is not a time:
 * a path can allocate less and still cost more.
 */
import autocannon from 'autocannon';

/**
 * Average bytes between two samples: some 100,000 samples over 20,000 requests of ~20 KB, so the
 * total is within a fraction of a percent. A finer interval only grows the profile: at 1 KB a
 * `POST /return` run's is over 50 MB of JSON, at 256 bytes more than the WebSocket client takes.
 */
const SAMPLING_INTERVAL = 4096;

interface Sampled {
  selfSize: number;
  children: Sampled[];
}

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
class InspectorSession {
  readonly #socket: WebSocket;
  #next = 0;
  readonly #waiting = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    const lost = () => {
      for (const answer of this.#waiting.values())
        answer({ error: { message: 'inspector connection lost' } });
      this.#waiting.clear();
    };
    socket.addEventListener('close', lost);
    socket.addEventListener('error', lost);
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
      const answer = message.id === undefined ? undefined : this.#waiting.get(message.id);
      if (answer) {
        this.#waiting.delete(message.id as number);
        answer(message);
      }
    });
  }

  static async open(inspectorPort: number): Promise<InspectorSession> {
    const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as Array<{
      webSocketDebuggerUrl: string;
    }>;
    const url = targets[0]?.webSocketDebuggerUrl;
    if (!url) throw new Error(`no inspector target on port ${inspectorPort}`);
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`inspector at ${url} refused`)), {
        once: true,
      });
    });
    return new InspectorSession(socket);
  }

  async send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#next;
    const message = await new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => {
      this.#waiting.set(id, resolve);
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
    if (message.error) throw new Error(`${method}: ${message.error.message}`);
    return message.result as T;
  }

  close(): void {
    this.#socket.close();
  }
}

/**
 * Bytes allocated per answered request over `requests` requests of `options` (after a warm-up of a
 * quarter as many), 8 at a time.
 */
export async function allocatedPerRequest(
  inspectorPort: number,
  options: autocannon.Options,
  requests = 20_000,
): Promise<number> {
  const run = (amount: number) => autocannon({ ...options, connections: 8, amount });
  await run(Math.ceil(requests / 4));
  const session = await InspectorSession.open(inspectorPort);
  try {
    await session.send('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    const result = await run(requests);
    const { profile } = await session.send<{ profile: { head: Sampled } }>('HeapProfiler.stopSampling');
    let bytes = 0;
    const walk = (node: Sampled): void => {
      bytes += node.selfSize;
      for (const child of node.children) walk(child);
    };
    walk(profile.head);
    return result['2xx'] > 0 ? bytes / result['2xx'] : Number.NaN;
  } finally {
    session.close();
  }
}
