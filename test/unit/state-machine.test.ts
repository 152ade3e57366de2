import { describe, expect, it } from 'vitest';
import {
  assertTransition,
  isFinal,
  nextStatusesFor,
  nextStep,
  ReturnStatus,
  statusesSetBy,
  transitions,
} from '../../servers/features/returns/state-machine.ts';

describe('return request state machine', () => {
  it('walks the happy path', () => {
    const path = ['received', 'delivered', 'acknowledged', 'approved', 'refunded', 'closed'] as const;
    const actors = ['service', 'brand', 'brand', 'brand', 'brand'] as const;
    for (let i = 0; i + 1 < path.length; i++) {
      expect(() =>
        assertTransition(path[i] as ReturnStatus, path[i + 1] as ReturnStatus, actors[i] as 'service'),
      ).not.toThrow();
    }
  });

  it('rejects transitions that are not in the table, and actors that may not make them', () => {
    expect(() => assertTransition('received', 'refunded', 'brand')).toThrow(/cannot become refunded/);
    expect(() => assertTransition('delivered', 'approved', 'requester')).toThrow(/by the requester/);
    expect(() => assertTransition('closed', 'received', 'service')).toThrow(/it is final/);
    expect(() => assertTransition('approved', 'cancelled', 'requester')).toThrow();
  });

  it('has a next step for every non-final status and none for final ones', () => {
    for (const status of ReturnStatus.options) {
      const step = nextStep(status);
      if (isFinal(status)) expect(step).toBeNull();
      else expect(step?.expected).toEqual(Object.keys(transitions[status]));
    }
    expect(isFinal('closed')).toBe(true);
    expect(isFinal('cancelled')).toBe(true);
    expect(isFinal('undeliverable')).toBe(false);
  });

  it('only names statuses that exist', () => {
    for (const [from, targets] of Object.entries(transitions)) {
      expect(ReturnStatus.options).toContain(from);
      for (const to of Object.keys(targets)) expect(ReturnStatus.options).toContain(to);
    }
  });

  it("derives what a brand's endpoint may ask for from the table", () => {
    expect(statusesSetBy('brand')).toEqual(['acknowledged', 'approved', 'denied', 'refunded', 'closed']);
    expect(nextStatusesFor('delivered', 'brand')).toEqual(['acknowledged', 'approved', 'denied']);
    expect(nextStatusesFor('received', 'brand')).toEqual([]);
  });
});
