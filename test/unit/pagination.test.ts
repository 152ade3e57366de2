import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../servers/errors.ts';
import { decodeCursor, encodeCursor, likePattern } from '../../servers/pagination.ts';

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
});
