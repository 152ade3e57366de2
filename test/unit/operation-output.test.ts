import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineOperation, invokeOperation, type OperationContext } from '../../servers/operation.ts';

/** The least context an operation without keys, limits or payment reads. */
const ctx = (): OperationContext =>
  ({
    services: {},
    request: { id: 'test', ip: '127.0.0.1', via: 'rest', headers: {} },
  }) as unknown as OperationContext;

function counted(result: () => object) {
  let checks = 0;
  const op = defineOperation({
    name: 'outputContract',
    title: 'Output contract',
    description: 'test',
    input: z.object({}),
    output: z.object({ value: z.number() }).check(() => {
      checks++;
    }),
    annotations: { readOnlyHint: true },
    access: 'public',
    errors: [],
    tags: [],
    // Results outside the schema are what the contract is there to catch.
    handler: async () => result() as { value: number },
  });
  return { op, checks: () => checks };
}

describe('the output contract', () => {
  it('is checked once for a frozen result served again, and strips what the schema does not declare', async () => {
    const answer = Object.freeze({ value: 1, internal: 'kept out' });
    const { op, checks } = counted(() => answer);
    const first = await invokeOperation(op, ctx(), {});
    const second = await invokeOperation(op, ctx(), {});
    expect(first).toEqual({ value: 1 });
    expect(second).toBe(first);
    expect(checks()).toBe(1);
  });

  it('is checked on every call for results that are not frozen (they may change between calls)', async () => {
    const answer = { value: 1 };
    const { op, checks } = counted(() => answer);
    expect(await invokeOperation(op, ctx(), {})).toEqual({ value: 1 });
    answer.value = 2;
    expect(await invokeOperation(op, ctx(), {})).toEqual({ value: 2 });
    expect(checks()).toBe(2);
  });

  it('refuses a frozen result outside the schema every time, never keeping it', async () => {
    const { op, checks } = counted(() => Object.freeze({ value: 'not a number' }));
    await expect(invokeOperation(op, ctx(), {})).rejects.toMatchObject({ code: 'internal_error' });
    await expect(invokeOperation(op, ctx(), {})).rejects.toMatchObject({ code: 'internal_error' });
    expect(checks()).toBe(0);
  });
});
