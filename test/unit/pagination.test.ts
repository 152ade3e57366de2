import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ServiceError } from '../../servers/errors.ts';
import {
  decodeCursor,
  encodeCursor,
  likePattern,
  queryBoolean,
  queryNumber,
} from '../../servers/pagination.ts';

describe('pagination', () => {
  it('round-trips a position through an opaque cursor', () => {
    const position = { at: '2026-11-21T15:20:00.000Z', id: '4f9d7a52-1f0e-4c8b-9a44-2d4a7c1e0b11' };
    const cursor = encodeCursor(position);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual(position);
    expect(decodeCursor(undefined)).toBeNull();
  });

  it('refuses cursors it did not issue, naming the field', () => {
    for (const bad of [
      'x',
      encodeCursor({ at: 'yesterday', id: 'nope' }),
      Buffer.from('{}').toString('base64url'),
    ]) {
      try {
        decodeCursor(bad);
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(ServiceError);
        expect((err as ServiceError).errors).toEqual([{ field: 'cursor', message: expect.any(String) }]);
      }
    }
  });

  it('takes LIKE wildcards and the escape character literally, lowercased', () => {
    expect(likePattern('100%_A\\b')).toBe('%100\\%\\_a\\\\b%');
  });

  it('reads query text as a number or boolean only when a JSON body could hold the same value', () => {
    const number = queryNumber(z.number().optional());
    for (const [text, value] of [
      ['5', 5],
      ['-2.25', -2.25],
      ['1e3', 1000],
      ['0', 0],
    ] as const) {
      expect(number.parse(text), text).toBe(value);
    }
    for (const garbage of [
      '',
      ' 5',
      '5 ',
      '0x10',
      '0b1',
      'Infinity',
      'NaN',
      '+5',
      '05',
      '5.',
      '.5',
      '1_000',
      '1e999',
    ]) {
      expect(number.safeParse(garbage).success, JSON.stringify(garbage)).toBe(false);
    }
    expect(number.parse(undefined)).toBeUndefined();
    const flag = queryBoolean(z.boolean().default(true));
    expect([flag.parse('true'), flag.parse('false'), flag.parse(false), flag.parse(undefined)]).toEqual([
      true,
      false,
      false,
      true,
    ]);
    for (const garbage of ['', 'TRUE', '1', 'yes', 0]) {
      expect(flag.safeParse(garbage).success, JSON.stringify(garbage)).toBe(false);
    }
  });
});
