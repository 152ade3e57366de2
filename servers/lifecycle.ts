/**
 * Where the process is in its life, for readiness (`GET {public_api_url}/health/ready`): a process
 * that is draining after SIGTERM answers 503 there so a load balancer stops sending it traffic,
 * while its in-flight requests finish (`server.ts`, `stop`).
 */
export class Lifecycle {
  #draining = false;

  get draining(): boolean {
    return this.#draining;
  }

  /** From now on readiness answers 503 `draining`; there is no way back (the process exits). */
  beginDraining(): void {
    this.#draining = true;
  }
}
