/**
 * A benchmarked server's V8 inspector: started with `--inspect=127.0.0.1:0`, its address read from
 * the banner it prints on stderr (the banner stays out of the bench's output; anything else the
 * server says goes on), and a Chrome DevTools Protocol session over its WebSocket. Idle, the
 * inspector costs the server nothing; the benches connect once their rates are taken.
 */
import type { ChildProcess } from 'node:child_process';

/** The argument that starts a child's inspector on a free loopback port. */
export const INSPECT_ARG = '--inspect=127.0.0.1:0';

const banner = /Debugger (listening|ending|attached)|For help, see|Waiting for the debugger/;

/**
 * The WebSocket address of `child`'s inspector (its stderr must be a pipe). Passes the rest of
 * what the child writes on stderr on to this process's.
 */
export function inspectorOf(child: ChildProcess): Promise<string> {
  return new Promise<string>((resolve) => {
    let seen = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      seen += text;
      const found = /Debugger listening on (ws:\/\/\S+)/.exec(seen);
      if (found?.[1]) resolve(found[1]);
      const rest = text.split('\n').filter((l) => l && !banner.test(l));
      if (rest.length) process.stderr.write(`${rest.join('\n')}\n`);
    });
  });
}

type Answer = { result?: unknown; error?: { message: string } };

/** A Chrome DevTools Protocol session over an inspector's WebSocket. */
export class InspectorSession {
  readonly #socket: WebSocket;
  #next = 0;
  readonly #waiting = new Map<number, (message: Answer) => void>();

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    // A lost connection fails what waits for an answer instead of leaving it waiting for ever.
    const lost = () => {
      for (const answer of this.#waiting.values())
        answer({ error: { message: 'inspector connection lost' } });
      this.#waiting.clear();
    };
    socket.addEventListener('close', lost);
    socket.addEventListener('error', lost);
    socket.addEventListener('message', (event) => {
      const message = JSON.parse(String(event.data)) as Answer & { id?: number };
      const answer = message.id === undefined ? undefined : this.#waiting.get(message.id);
      if (answer) {
        this.#waiting.delete(message.id as number);
        answer(message);
      }
    });
  }

  static async open(url: string): Promise<InspectorSession> {
    const socket = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`the inspector at ${url} refused`)), {
        once: true,
      });
    });
    return new InspectorSession(socket);
  }

  async send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = ++this.#next;
    const message = await new Promise<Answer>((resolve) => {
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

/** A full, compacting garbage collection in the server (`HeapProfiler.collectGarbage`). */
export async function collectGarbage(inspector: string): Promise<void> {
  const session = await InspectorSession.open(inspector);
  try {
    await session.send('HeapProfiler.collectGarbage');
  } finally {
    session.close();
  }
}
