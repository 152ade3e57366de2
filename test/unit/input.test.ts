import { describe, expect, it } from 'vitest';
import { calendarDate, DATE_RANGE_MESSAGE, dateTime, NUL_MESSAGE, nulFields } from '../../servers/input.ts';

describe('nulFields', () => {
  it('names every string holding NUL by its path, values and keys, at any depth', () => {
    const input = {
      name: 'Jane',
      order: { number: 'A\u00001', lines: [{ sku: 'ok' }, { sku: '\u0000' }] },
      tags: ['a', 'b\u0000'],
      'na\u0000me': 'x',
      headers: { 'x-\u0000': { deeper: 'a\u0000' } },
    };
    expect(nulFields(input)).toEqual([
      { field: 'order.number', message: NUL_MESSAGE },
      { field: 'order.lines.1.sku', message: NUL_MESSAGE },
      { field: 'tags.1', message: NUL_MESSAGE },
      { field: 'na\\u0000me', message: `name ${NUL_MESSAGE}` },
      { field: 'headers.x-\\u0000', message: `name ${NUL_MESSAGE}` },
    ]);
    expect(nulFields('\u0000')).toEqual([{ field: '(body)', message: NUL_MESSAGE }]);
    expect(nulFields({ n: 1, b: true, z: null, s: 'fine' })).toEqual([]);
  });

  it('walks a body nested deeper than the call stack without throwing', () => {
    let deep: unknown = 'a\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const found = nulFields(deep);
    expect(found).toHaveLength(1);
    expect(found[0]?.field.split('.')).toHaveLength(200_000);
  });
});

describe('dates both databases store', () => {
  const issues = (
    schema: { safeParse(v: unknown): { error?: { issues: { message: string }[] } } },
    v: string,
  ) => schema.safeParse(v).error?.issues.map((i) => i.message) ?? [];

  it('accepts years 0001 to 9999 and refuses year 0000', () => {
    expect(issues(calendarDate(), '0001-01-01')).toEqual([]);
    expect(issues(calendarDate(), '9999-12-31')).toEqual([]);
    expect(issues(calendarDate(), '0000-12-31')).toEqual([DATE_RANGE_MESSAGE]);
    expect(issues(calendarDate(), '0000-02-29')).toEqual([DATE_RANGE_MESSAGE]);
  });

  it('judges a date-time by its UTC instant, and leaves text that is no date to the format check', () => {
    const withOffset = dateTime({ offset: true });
    expect(issues(withOffset, '0001-01-01T00:00:00Z')).toEqual([]);
    expect(issues(withOffset, '0001-01-01T00:00:00+01:00')).toEqual([DATE_RANGE_MESSAGE]);
    expect(issues(withOffset, '0001-01-01T00:00:00-01:00')).toEqual([]);
    expect(issues(withOffset, '9999-12-31T23:59:59.999Z')).toEqual([]);
    expect(issues(withOffset, '9999-12-31T23:00:00-02:00')).toEqual([DATE_RANGE_MESSAGE]);
    expect(issues(withOffset, 'yesterday')).toHaveLength(1);
    expect(issues(withOffset, 'yesterday')).not.toContain(DATE_RANGE_MESSAGE);
  });
});
