/**
 * Where the process is in its life, and what runs beside the requests. Readiness
 * (`GET {public_api_url}/health/ready`): a process that is draining after SIGTERM answers 503 there
 * so a load balancer stops sending it traffic, while its in-flight requests finish (`server.ts`,
 * `stop`). Background work registers here as it is built (`servers/services.ts`): a worker is one
 * `run(...)`, a housekeeping sweep one `sweep(...)`; `start` starts them all and `stop` stops them
 * all and waits for them, then releases what they used (`onClose`).
 */
import type { Logger } from 'pino';

/** Something that runs in the background while the service runs: a polling worker, a queue. */
export interface Background {
  /** Absent: it runs from its first use (a write queue), and is only stopped. */
  start?(): void;
  /** Stops it and waits for what is in flight. */
  stop(): Promise<void>;
}

/** How often the housekeeping sweeps run. */
export const SWEEP_INTERVAL_MS = 3_600_000;

export class Lifecycle {
  readonly #log: Logger;
  #draining = false;
  readonly #background: Background[] = [];
  readonly #sweeps: { name: string; run: () => Promise<unknown> }[] = [];
  readonly #closers: (() => Promise<void> | void)[] = [];
  #housekeeping: NodeJS.Timeout | undefined;

  constructor(log: Logger) {
    this.#log = log;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** From now on readiness answers 503 `draining`; there is no way back (the process exits). */
  beginDraining(): void {
    this.#draining = true;
  }

  /** Runs `worker` from `start` until `stop`; returns it. */
  run<W extends Background>(worker: W): W {
    this.#background.push(worker);
    return worker;
  }

  /** Runs `sweep` every `SWEEP_INTERVAL_MS` once started; a failure is logged as `<name> sweep failed`. */
  sweep(name: string, sweep: () => Promise<unknown>): void {
    this.#sweeps.push({ name, run: sweep });
  }

  /** Called in order once every worker has stopped: what they share (fetchers, the mailer). */
  onClose(close: () => Promise<void> | void): void {
    this.#closers.push(close);
  }

  /** Starts every worker and the housekeeping timer. */
  start(): void {
    for (const worker of this.#background) worker.start?.();
    const sweep = () => {
      for (const { name, run } of this.#sweeps) {
        run().catch((err) => this.#log.warn({ err }, `${name} sweep failed`));
      }
    };
    this.#housekeeping = setInterval(sweep, SWEEP_INTERVAL_MS);
    this.#housekeeping.unref();
  }

  /** Stops the background work and waits for what is in flight, then closes. Does not close the database. */
  async stop(): Promise<void> {
    clearInterval(this.#housekeeping);
    await Promise.all(this.#background.map((worker) => worker.stop()));
    for (const close of this.#closers) await close();
  }
}
