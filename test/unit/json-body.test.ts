import { describe, expect, it } from 'vitest';
import { type MalformedJson, parseJsonBody } from '../../servers/json-body.ts';

const bytes = (text: string | number[]) =>
  typeof text === 'string' ? Buffer.from(text, 'utf8') : Buffer.from(text);
const fault = (body: string | number[]): MalformedJson | undefined => {
  const parsed = parseJsonBody(bytes(body));
  return parsed.ok ? undefined : parsed.fault;
};

/** A body holding every kind of member, with names repeated only across objects. */
const wellFormed = {
  jsonrpc: '2.0',
  id: 1,
  method: 'tools/call',
  params: { name: 'lookup_card_charge', arguments: { charge: 'NETFLIX.COM "quoted" \\ {"a":1}' } },
  list: [{ a: 1 }, { a: 2 }, [], {}, 'a', { b: { a: 1 } }],
  emoji: '\u{1F600} \uD83D\uDE00',
  same: { a: 1, A: 2, 'a ': 3 },
};

describe('parseJsonBody', () => {
  it('parses what JSON.parse does when nothing is repeated or ill-formed', () => {
    expect(parseJsonBody(bytes(JSON.stringify(wellFormed)))).toEqual({ ok: true, value: wellFormed });
    // Escapes that decode to well-formed text: a pair, a BMP character, an escaped backslash before `u`.
    expect(parseJsonBody(bytes('{"a":"\\uD83D\\uDE00","b":"\\u00e9","c":"\\\\uD800"}'))).toEqual({
      ok: true,
      value: { a: '\u{1F600}', b: 'é', c: '\\uD800' },
    });
    // A byte order mark is ignored (RFC 8259 section 8.1).
    expect(parseJsonBody(bytes([0xef, 0xbb, 0xbf, ...bytes('{"a":1}')]))).toEqual({
      ok: true,
      value: { a: 1 },
    });
  });

  it('refuses invalid UTF-8 at the byte where it starts', () => {
    // `{"a":"` then a lone continuation byte
    expect(fault([...bytes('{"a":"'), 0x80, ...bytes('"}')])).toEqual({ offset: 6, reason: 'invalid UTF-8' });
    // A surrogate encoded in UTF-8 (CESU-8), after a real U+FFFD and a multi-byte character.
    expect(fault([...bytes('{"\uFFFD\u00e9":"'), 0xed, 0xa0, 0x80, ...bytes('"}')])).toEqual({
      offset: 10,
      reason: 'invalid UTF-8',
    });
    // Overlong encoding of "/", and a sequence cut short at the end.
    expect(fault([...bytes('["'), 0xc0, 0xaf, ...bytes('"]')])?.offset).toBe(2);
    expect(fault([...bytes('["ab'), 0xe2, 0x82])?.offset).toBe(4);
  });

  it('refuses a lone surrogate escape, high or low, in a value or a name, naming the member', () => {
    expect(fault('{"a":{"b":["x","\\uD800"]}}')).toEqual({
      offset: 16,
      reason: 'lone surrogate escape (RFC 7493 section 2.1)',
      field: 'a.b.1',
    });
    expect(fault('{"a":"ok \\uDC00"}')).toMatchObject({ offset: 9, field: 'a' });
    expect(fault('{"a":"\\uD83D\\u0041"}')).toMatchObject({ offset: 6, field: 'a' });
    expect(fault('{"a":"\\uD83D x \\uDE00"}')).toMatchObject({ offset: 6, field: 'a' });
    expect(fault('{"a":"\\uDE00\\uD83D"}')).toMatchObject({ offset: 6, field: 'a' });
    expect(fault('{"a":"\\uD83D"}')).toMatchObject({ offset: 6 });
    expect(fault('{"p":{"k\\udbff":1}}')).toMatchObject({ offset: 8, field: 'p' });
    // A raw astral character after a high surrogate escape still leaves the escape alone.
    expect(fault('{"a":"\\uD83D\u{1F600}"}')).toMatchObject({ offset: 6 });
    // After many strings with other escapes (and a well-formed pair), the one at the end.
    const escaped = Array.from({ length: 2000 }, (_, i) => `"k${i}":"\\n\\uD83D\\uDE00"`).join(',');
    expect(fault(`{${escaped},"last":"\\uDBFF"}`)).toMatchObject({
      offset: escaped.length + 10,
      field: 'last',
    });
  });

  it('refuses a name repeated in any object at any depth, however it is spelled', () => {
    expect(fault('{"amount":1,"currency":"USD","amount":1500}')).toEqual({
      offset: 29,
      reason: 'duplicate name (RFC 7493 section 2.3)',
      field: 'amount',
    });
    expect(fault('{"params":{"arguments":{"charge":"a","x":[1,{"k":1,"k":2}]}}}')).toMatchObject({
      field: 'params.arguments.x.1.k',
    });
    // The same name escaped, and repeated after a nested object holding it.
    expect(fault('{"a":1,"\\u0061":2}')).toMatchObject({ offset: 7, field: 'a' });
    expect(fault('{"a":{"a":{"a":1}},"b":2,"a":3}')).toMatchObject({ offset: 25, field: 'a' });
    // Objects with many names (kept in a set), and the same name in sibling objects, which is fine.
    const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, i]));
    const text = JSON.stringify(many);
    expect(fault(text)).toBeUndefined();
    expect(fault(`${text.slice(0, -1)},"k17":0}`)).toMatchObject({ field: 'k17' });
    expect(fault('[{"a":1},{"a":1}]')).toBeUndefined();
  });

  it('counts members to skip the second reading only where no name can repeat', () => {
    // Colons in strings, and a repeated name among them, without a backslash anywhere.
    expect(fault('{"url":"https://a.example:8443/x","a":"b:c"}')).toBeUndefined();
    expect(fault('{"a":"x:y","a":1}')).toMatchObject({ field: 'a' });
    expect(fault('{"a":{"b":1},"a":{"c":2,"d":3}}')).toMatchObject({ field: 'a' });
    // A polluted prototype would add its property to every count: the body is then read again.
    const prototype = Object.prototype as Record<string, unknown>;
    prototype.polluted = 1;
    try {
      expect(fault('{"a":1,"a":2}')).toMatchObject({ field: 'a' });
    } finally {
      delete prototype.polluted;
    }
  });

  it('names the byte, not the character, after multi-byte text', () => {
    expect(fault('{"é":"日本","é":1}')).toMatchObject({ offset: 15, field: 'é' });
    expect(fault([0xef, 0xbb, 0xbf, ...bytes('{"a":1,"a":2}')])).toMatchObject({ offset: 10 });
  });

  it('reports a syntax error with the position V8 names', () => {
    expect(fault('{"a": 1,}')).toEqual({ offset: 8, reason: 'Expected double-quoted property name' });
    expect(fault('{"é": tru}')?.reason).toMatch(/^Unexpected token/);
    expect(fault('{"a": ')).toEqual({ offset: 6, reason: 'unexpected end of input' });
  });

  it('passes the decoded text to the reviver it is given', () => {
    const seen: string[] = [];
    const parsed = parseJsonBody(bytes('{"id":1}'), (text) => {
      seen.push(text);
      return (key, value) => (key === 'id' ? 2 : value);
    });
    expect(parsed).toEqual({ ok: true, value: { id: 2 } });
    expect(seen).toEqual(['{"id":1}']);
  });

  it('finds the first repeated name of random bodies, as a reading of the whole tree does', () => {
    // Objects as lists of members, so that a name can be given twice; names drawn from a few, in
    // spellings that decode alike (an escaped letter, an escaped quote or backslash).
    type Value = string | number | Value[] | { members: [string, Value][] };
    let seed = 28;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const spellings: [string, string][] = [
      ['a', '"a"'],
      ['a', '"\\u0061"'],
      ['b"', '"b\\""'],
      ['c\\', '"c\\\\"'],
      ['d:', '"d:"'],
      ['e', '"e"'],
      ['f', '"f"'],
      ['g', '"g"'],
      ['h', '"h"'],
      ['i', '"i"'],
    ];
    const value = (depth: number): Value => {
      const kind = depth > 3 ? random(2) : random(4);
      if (kind === 0) return ['x', 'y"z', '{"a":1}', '\\'][random(4)] as string;
      if (kind === 1) return random(100);
      if (kind === 2) return Array.from({ length: random(4) }, () => value(depth + 1));
      return { members: Array.from({ length: random(12) }, () => [String(random(10)), value(depth + 1)]) };
    };
    const write = (v: Value): string => {
      if (typeof v === 'string' || typeof v === 'number') return JSON.stringify(v);
      if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
      return `{${v.members.map(([k, m]) => `${(spellings[Number(k)] as [string, string])[1]}:${write(m)}`).join(',')}}`;
    };
    /** The path of the first repeated name in the order a reader meets the names, or undefined. */
    const firstRepeat = (v: Value, path: (string | number)[]): string | undefined => {
      if (typeof v !== 'object') return undefined;
      if (Array.isArray(v)) {
        for (const [i, item] of v.entries()) {
          const found = firstRepeat(item, [...path, i]);
          if (found !== undefined) return found;
        }
        return undefined;
      }
      const seen = new Set<string>();
      for (const [k, member] of v.members) {
        const name = (spellings[Number(k)] as [string, string])[0];
        if (seen.has(name)) return [...path, name].join('.');
        seen.add(name);
        const found = firstRepeat(member, [...path, name]);
        if (found !== undefined) return found;
      }
      return undefined;
    };
    let repeats = 0;
    for (let round = 0; round < 2000; round++) {
      const body = {
        members: Array.from({ length: random(6) }, (): [string, Value] => [String(random(10)), value(1)]),
      };
      const text = write(body);
      const expected = firstRepeat(body, []);
      if (expected !== undefined) repeats++;
      const found = fault(text);
      expect({ text, field: found?.field }).toEqual({ text, field: expected });
    }
    expect(repeats).toBeGreaterThan(500);
  });

  it('walks bodies nested deeper than the call stack', () => {
    const deep = `${'['.repeat(100_000)}{"a":1,"a":2}${']'.repeat(100_000)}`;
    expect(fault(deep)?.field?.split('.')).toHaveLength(100_001);
  });
});
