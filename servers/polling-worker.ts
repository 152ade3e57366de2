/**
 * The loop behind the service's durable queues (brand deliveries, scans): claim due work; when
 * there was none, sleep for the poll interval or until `nudge()` says work was just committed.
 * Several processes can run it against one database: what a tick claims is leased to `owner`.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';

export abstract class PollingWorker {
  /** Lease holder id of this worker: host, process and a random suffix. */
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  #running = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;

  /** Claims and starts one batch; returns how many items it claimed (0: nothing due, sleep). */
  abstract tick(): Promise<number>;

  protected abstract readonly pollIntervalMs: number;
  protected abstract readonly log: Logger;
  /** Names the worker in logs (`delivery tick failed`). */
  protected abstract readonly name: string;

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Look for due work now instead of at the next poll. */
  nudge(): void {
    this.#wake?.();
  }

  /** Stops claiming and waits for the current tick. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let claimed = 0;
      try {
        claimed = await this.tick();
      } catch (err) {
        this.log.error({ err }, `${this.name} tick failed`);
      }
      if (claimed > 0 || !this.#running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.pollIntervalMs);
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wake = null;
    }
  }
}
