/**
 * SVCB and HTTPS resource records (RFC 9460): their RDATA read from and written to the wire.
 * dns-packet (5.6.1, its latest release) knows neither type and hands their RDATA over as bytes, so
 * the layout of section 2.2 is read here: SvcPriority, an uncompressed TargetName, then SvcParams
 * as key, length and value, keys in increasing order. `dns-lookup.ts` asks for them; the test DNS
 * server writes them.
 */
import ipaddr from 'ipaddr.js';

/** RFC 9460 section 14.3.2: the SvcParamKeys with names; any other is `key<N>`. */
const keyNames: Readonly<Record<number, string>> = {
  0: 'mandatory',
  1: 'alpn',
  2: 'no-default-alpn',
  3: 'port',
  4: 'ipv4hint',
  5: 'ech',
  6: 'ipv6hint',
  7: 'dohpath',
};
const keyNumbers = new Map(Object.entries(keyNames).map(([n, name]) => [name, Number(n)]));

export const SVCB_TYPE = 64;
export const HTTPS_TYPE = 65;

export interface SvcbRecord {
  /** 0: AliasMode; 1 and above: ServiceMode, lower preferred. */
  priority: number;
  /** The target without a trailing dot; `.` when the record names its own owner (or, in AliasMode, no service). */
  target: string;
  /** Parameters in presentation form: alpn and hints comma separated, `port` a number, others as text. */
  params: Record<string, string>;
}

export const svcParamKeyName = (key: number): string => keyNames[key] ?? `key${key}`;

/** Decodes one SVCB/HTTPS RDATA; throws on a malformed one. */
export function decodeSvcb(rdata: Buffer): SvcbRecord {
  if (rdata.length < 3) throw new Error('SVCB RDATA too short');
  const priority = rdata.readUInt16BE(0);
  const { name, next } = readName(rdata, 2);
  const params: Record<string, string> = {};
  let at = next;
  while (at < rdata.length) {
    if (at + 4 > rdata.length) throw new Error('SVCB parameter cut short');
    const key = rdata.readUInt16BE(at);
    const length = rdata.readUInt16BE(at + 2);
    const value = rdata.subarray(at + 4, at + 4 + length);
    if (value.length !== length) throw new Error('SVCB parameter value cut short');
    params[svcParamKeyName(key)] = presentValue(key, value);
    at += 4 + length;
  }
  return { priority, target: name, params };
}

/** Encodes an SVCB/HTTPS RDATA from the presentation form `decodeSvcb` gives. */
export function encodeSvcb(record: SvcbRecord): Buffer {
  const parts: Buffer[] = [
    Buffer.from([record.priority >> 8, record.priority & 0xff]),
    writeName(record.target),
  ];
  const keyed = Object.entries(record.params)
    .map(([name, value]) => ({ key: keyNumberOf(name), value }))
    .sort((a, b) => a.key - b.key);
  for (const { key, value } of keyed) {
    const bytes = wireValue(key, value);
    const head = Buffer.alloc(4);
    head.writeUInt16BE(key, 0);
    head.writeUInt16BE(bytes.length, 2);
    parts.push(head, bytes);
  }
  return Buffer.concat(parts);
}

function keyNumberOf(name: string): number {
  const known = keyNumbers.get(name);
  if (known !== undefined) return known;
  const match = /^key(\d{1,5})$/.exec(name);
  if (!match) throw new Error(`unknown SvcParamKey ${name}`);
  return Number(match[1]);
}

/** Section 2.2: the TargetName is never compressed, so no pointer is followed. */
function readName(buf: Buffer, start: number): { name: string; next: number } {
  const labels: string[] = [];
  let at = start;
  for (;;) {
    const length = buf[at];
    if (length === undefined) throw new Error('SVCB TargetName cut short');
    if (length === 0) break;
    if (length > 63) throw new Error('SVCB TargetName is compressed or malformed');
    labels.push(buf.subarray(at + 1, at + 1 + length).toString('latin1'));
    at += 1 + length;
  }
  return { name: labels.length ? labels.join('.') : '.', next: at + 1 };
}

function writeName(name: string): Buffer {
  const labels = name === '.' ? [] : name.replace(/\.$/, '').split('.');
  return Buffer.concat([
    ...labels.map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])),
    Buffer.from([0]),
  ]);
}

function presentValue(key: number, value: Buffer): string {
  switch (key) {
    case 0:
      return Array.from({ length: value.length / 2 }, (_, i) =>
        svcParamKeyName(value.readUInt16BE(i * 2)),
      ).join(',');
    case 1: {
      const ids: string[] = [];
      for (let at = 0; at < value.length; ) {
        const length = value[at] as number;
        ids.push(value.subarray(at + 1, at + 1 + length).toString('utf8'));
        at += 1 + length;
      }
      return ids.join(',');
    }
    case 2:
      return '';
    case 3:
      return String(value.readUInt16BE(0));
    case 4:
    case 6: {
      const size = key === 4 ? 4 : 16;
      return Array.from({ length: value.length / size }, (_, i) =>
        ipaddr.fromByteArray([...value.subarray(i * size, (i + 1) * size)]).toString(),
      ).join(',');
    }
    case 5:
      return value.toString('base64');
    default:
      return value.toString('utf8');
  }
}

function wireValue(key: number, value: string): Buffer {
  switch (key) {
    case 0:
      return Buffer.concat(
        value.split(',').map((k) => {
          const b = Buffer.alloc(2);
          b.writeUInt16BE(keyNumberOf(k.trim()), 0);
          return b;
        }),
      );
    case 1:
      return Buffer.concat(
        value.split(',').map((id) => Buffer.concat([Buffer.from([Buffer.byteLength(id)]), Buffer.from(id)])),
      );
    case 2:
      return Buffer.alloc(0);
    case 3: {
      const b = Buffer.alloc(2);
      b.writeUInt16BE(Number(value), 0);
      return b;
    }
    case 4:
    case 6:
      return Buffer.from(value.split(',').flatMap((ip) => ipaddr.parse(ip.trim()).toByteArray()));
    case 5:
      return Buffer.from(value, 'base64');
    default:
      return Buffer.from(value, 'utf8');
  }
}
