/**
 * The request line composed by `servers/logger.ts` (`requestLineWriter`) is the line pino itself
 * writes for the same fields, byte for byte: whatever the path holds, at both levels, for both
 * messages (but for a lone surrogate, which it escapes) - and a logger it did not make gets its
 * lines through pino.
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  jsonString,
  loggerOn,
  type RequestLineFields,
  requestLineWriter,
  tenthsText,
} from '../../servers/logger.ts';

function capture(): { stream: { write: (line: string) => void }; taken: () => string[] } {
  let lines: string[] = [];
  return {
    stream: { write: (line: string) => lines.push(line) },
    taken: () => {
      const out = lines;
      lines = [];
      return out;
    },
  };
}

const paths = [
  '/cs/agent',
  '/',
  '',
  '/a"quoted"/and\\back\\slashed',
  '/control\u0001\u001f\ttab\nnewline',
  '/latin1 bytes as received: \u00e9\u00ff',
  '/unicode/\u2603/\ud83d\ude00',
  `/${'long-segment/'.repeat(12)}`,
];

describe('request line', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is what pino writes for the same fields, at info and error, completed and aborted', () => {
    vi.useFakeTimers({ now: new Date('2026-11-27T08:00:00.123Z'), toFake: ['Date'] });
    const { stream, taken } = capture();
    const log = loggerOn({ log_level: 'info' }, stream);
    const write = requestLineWriter(log);
    let compared = 0;
    for (const path of paths) {
      for (const [level, status] of [
        ['info', 200],
        ['info', 499],
        ['error', 503],
      ] as const) {
        for (const msg of ['request completed', 'request aborted']) {
          const fields: RequestLineFields = {
            req_id: status === 200 ? '0b7e2d4c-1f7a-4c55-9a7e-3d1f0c2b8a61' : 'given-id.1:x_y-z',
            method: status === 503 ? 'M-SEARCH' : 'POST',
            path,
            status,
            ms: status === 200 ? 0.4 : 1234.5,
          };
          write(level, fields, msg);
          log[level](fields, msg);
          const [direct, viaPino] = taken();
          expect(direct, JSON.stringify(path)).toBe(viaPino);
          expect(JSON.parse(direct as string)).toEqual({
            level: level === 'info' ? 30 : 50,
            time: Date.parse('2026-11-27T08:00:00.123Z'),
            service: 'agent-service',
            ...fields,
            msg,
          });
          compared++;
        }
      }
    }
    expect(compared).toBe(paths.length * 6);
  });

  it('keeps a lone surrogate, escaped, where pino writes it raw (lost once encoded as UTF-8)', () => {
    // Not a path a request can carry (Node reads the request line as latin1), but a field all the same.
    const { stream, taken } = capture();
    const log = loggerOn({ log_level: 'info' }, stream);
    const fields = { req_id: 'r', method: 'GET', path: '/lone\ud800surrogate', status: 200, ms: 1 };
    requestLineWriter(log)('info', fields, 'request completed');
    const [line] = taken();
    expect(line).toContain('"path":"/lone\\ud800surrogate"');
    expect(JSON.parse(Buffer.from(line as string).toString()).path).toBe('/lone\ud800surrogate');
  });

  it('goes through the logger for a logger loggerOn did not make', () => {
    const { stream, taken } = capture();
    const log = pino({ base: { app: 'other' } }, stream);
    requestLineWriter(log)('info', { req_id: 'r', method: 'GET', path: '/p', status: 200, ms: 1 }, 'done');
    expect(JSON.parse(taken()[0] as string)).toMatchObject({ app: 'other', req_id: 'r', msg: 'done' });
  });

  it('carries the time of each line, written again once the millisecond changes', () => {
    vi.useFakeTimers({ now: 1_795_000_000_000, toFake: ['Date'] });
    const { stream, taken } = capture();
    const log = loggerOn({ log_level: 'info' }, stream);
    const write = requestLineWriter(log);
    const fields = { req_id: 'r', method: 'GET', path: '/p', status: 200, ms: 0.2 };
    write('info', fields, 'request completed');
    write('info', fields, 'request completed');
    vi.setSystemTime(1_795_000_000_001);
    write('info', fields, 'request completed');
    vi.setSystemTime(1_795_000_000_000);
    write('info', fields, 'request completed');
    expect(taken().map((line) => JSON.parse(line).time)).toEqual([
      1_795_000_000_000, 1_795_000_000_000, 1_795_000_000_001, 1_795_000_000_000,
    ]);
  });
});

describe('line pieces', () => {
  it('jsonString is JSON.stringify for every kind of string', () => {
    const samples = [
      ...paths,
      '0b7e2d4c-1f7a-4c55-9a7e-3d1f0c2b8a61',
      'M-SEARCH',
      'request completed',
      '\u007f\u2028\u2029',
      '\ud800',
      '\udc00x',
      '"',
      '\\',
      ...Array.from({ length: 0x80 }, (_, c) => `a${String.fromCharCode(c)}b`),
    ];
    for (const sample of samples)
      expect(jsonString(sample), JSON.stringify(sample)).toBe(JSON.stringify(sample));
  });

  it('tenthsText is String(ms) for durations rounded to tenths and for any other number', () => {
    const values = [0, -0, 0.1, 0.3, 0.6, 1.7, 9.9, 10, 1234.5, 99_999.9, 107_374_182.3, 2 ** 31, 1e21];
    for (let i = 0; i < 20_000; i++) values.push(Math.round(Math.random() * 1e7) / 10);
    values.push(0.05, 0.15, -1, -0.5, 1 / 3, Number.NaN, Number.POSITIVE_INFINITY, 1e-7, 2 ** 53);
    for (const ms of values) expect(tenthsText(ms), String(ms)).toBe(String(ms));
  });
});
