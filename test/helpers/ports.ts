/** Loopback ports for tests. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * A loopback port nothing listens on, that nothing else will take meanwhile: for a service whose
 * processes must share a fixed port, a peer that is down now and started later, a site that cannot
 * be reached. Taken below the system's ephemeral range: a port freed after `listen(0)` can be handed
 * at once to the `listen(0)` of another test file running at the same time, which once made an
 * "unreachable" site answer. Only a test that asks for a port binds one there.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = ephemeralRangeStart();
  for (;;) {
    const port = 10_000 + Math.floor(Math.random() * (ephemeralLow - 10_000));
    if (await bindable(port)) return port;
  }
}

function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return low > 11_000 ? low : 32_768;
  } catch {
    return 32_768; // Linux's default; elsewhere only a likely bound
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
