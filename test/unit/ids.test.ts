import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { timeOrderedId } from '../../db/ids.ts';

const at = (id: string) => Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('timeOrderedId', () => {
  it('is a UUIDv7 of RFC 9562: the millisecond first, version 7, the RFC variant', () => {
    const now = Date.UTC(2026, 10, 26, 19, 15, 0, 123);
    const before = Date.now();
    const id = timeOrderedId(now);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(at(id)).toBe(now);
    expect(z.uuid({ version: 'v7' }).safeParse(id).success).toBe(true);
    expect(at(timeOrderedId())).toBeGreaterThanOrEqual(before);
  });

  it('sorts by the millisecond it was made, as text and as a PostgreSQL uuid', () => {
    const ids = [5, 1, 4_000_000_000_000, 256, 3].map((ms) => timeOrderedId(ms));
    const byText = [...ids].sort();
    expect(byText.map(at)).toEqual([1, 3, 5, 256, 4_000_000_000_000]);
  });

  it('keeps 74 random bits: ids of one millisecond differ', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(1)));
    expect(ids.size).toBe(10_000);
    // The random part is not a counter: across ids it takes many values in every position.
    const digits = [...ids].map((id) => id.replaceAll('-', '').slice(13));
    for (let position = 0; position < 19; position++) {
      if (position === 3) continue; // the variant nibble: 8, 9, a or b
      expect(new Set(digits.map((d) => d[position])).size, `hex digit ${position}`).toBe(16);
    }
  });
});
