/** The auction's arithmetic (servers/features/catalog/featured-bid/auction.ts). */
import { describe, expect, it } from 'vitest';
import { minimumNextBid, unusedCredit } from '../../servers/features/catalog/featured-bid/auction.ts';

describe('featured auction arithmetic', () => {
  const from = Date.parse('2026-11-01T00:00:00.000Z');
  const bid = { amount: 6_000_000, days: 3, holds_until: new Date(from + 3 * 86_400_000).toISOString() };

  it('credits the unused part pro rata by the whole second', () => {
    expect(unusedCredit(bid, new Date(from))).toBe(6_000_000);
    expect(unusedCredit(bid, new Date(from + 86_400_000))).toBe(4_000_000);
    expect(unusedCredit(bid, new Date(from + 86_400_000 + 1))).toBe(3_999_976); // 172 799 s left
    expect(unusedCredit(bid, new Date(from + 3 * 86_400_000))).toBe(0);
    expect(unusedCredit(bid, new Date(from + 4 * 86_400_000))).toBe(0);
  });

  it('asks 1.00 for a free slot and the holder plus 0.01 otherwise', () => {
    expect(minimumNextBid(undefined)).toBe(1_000_000);
    expect(minimumNextBid({ bid: 2_000_000 })).toBe(2_010_000);
  });
});
