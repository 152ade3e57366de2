/**
 * Bytes a request allocates on the server's JavaScript heap, through the server's inspector
 * (`inspector.ts`): V8's sampling heap profiler, keeping the samples of objects
 * the collector already freed, over a fixed number of requests. Unlike a rate, which swings by tens
 * of percent on a shared host, this repeats within about 1% from run to run, so a change that
 * makes a hot path allocate more shows even when its rate is lost in the noise. It is not a time:
 * a path can allocate less and still cost more.
 */
import autocannon from 'autocannon';
import { InspectorSession } from './inspector.ts';

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

/**
 * Bytes allocated per answered request over `requests` requests of `options` (after a warm-up of a
 * quarter as many), 8 at a time.
 */
export async function allocatedPerRequest(
  inspector: string,
  options: autocannon.Options,
  requests = 20_000,
): Promise<number> {
  const run = (amount: number) => autocannon({ ...options, connections: 8, amount });
  await run(Math.ceil(requests / 4));
  const session = await InspectorSession.open(inspector);
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
