/**
 * A real DNS server on loopback (UDP) answering TXT, A, AAAA, MX, SVCB and HTTPS queries from tables, so domain
 * verification by TXT record, names that resolve to loopback fixture sites (live merchant
 * resolution, brand sites) and mail domains (MX, or none) are tested through Node's resolver
 * against the wire protocol. Unknown names: NXDOMAIN; a known name asked for another type: no
 * records (NODATA). Every question is recorded, so a test can tell which server was asked. TXT
 * records of any length (DKIM keys) are served as a list of character-strings. SVCB and HTTPS
 * records (DNS-AID's `_agents` names) are written with the service's own RDATA codec
 * (`servers/outbound/svcb.ts`), the layout of RFC 9460 section 2.2.
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';
import { encodeSvcb, type SvcbRecord } from '../../servers/outbound/svcb.ts';

export interface MxAnswer {
  exchange: string;
  preference: number;
}

export interface TestDnsServer {
  /** `127.0.0.1:PORT`, for `outbound.dns_servers` (or a feature's own list). */
  address: string;
  /** TXT records per lowercase name; edit freely between queries. */
  txt: Map<string, string[]>;
  /** IPv4 addresses (A records) per lowercase name; edit freely between queries. */
  a: Map<string, string[]>;
  /** IPv6 addresses (AAAA records) per lowercase name. */
  aaaa: Map<string, string[]>;
  /** Mail exchangers (MX records) per lowercase name; `{exchange: '.'}` is a null MX (RFC 7505). */
  mx: Map<string, MxAnswer[]>;
  /** SVCB records (RFC 9460) per lowercase name. */
  svcb: Map<string, SvcbRecord[]>;
  /** HTTPS records (SVCB for HTTPS origins) per lowercase name. */
  https: Map<string, SvcbRecord[]>;
  /** Every question asked, `TYPE name`, in order. */
  questions: string[];
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const a = new Map<string, string[]>();
  const aaaa = new Map<string, string[]>();
  const mx = new Map<string, MxAnswer[]>();
  const svcb = new Map<string, SvcbRecord[]>();
  const https = new Map<string, SvcbRecord[]>();
  const questions: string[] = [];
  const socket = createSocket('udp4');
  socket.on('message', (message, peer) => {
    const query = packet.decode(message);
    const question = query.questions?.[0];
    const name = question?.name.toLowerCase() ?? '';
    if (question) questions.push(`${question.type} ${name}`);
    const known = [txt, a, aaaa, mx, svcb, https].some((table) => table.has(name));
    const answers: packet.Answer[] = [];
    const base = { name: question?.name ?? '', ttl: 60, class: 'IN' as const };
    if (question?.type === 'TXT') {
      // A record longer than one character-string (255 octets, RFC 1035 3.3), a DKIM key, is
      // sent as several; resolvers join them (RFC 7208 3.3, RFC 6376 3.6.2.2).
      for (const data of txt.get(name) ?? []) {
        answers.push({ ...base, type: 'TXT', data: data.match(/[\s\S]{1,255}/g) ?? [''] });
      }
    } else if (question?.type === 'A') {
      for (const data of a.get(name) ?? []) answers.push({ ...base, type: 'A', data });
    } else if (question?.type === 'AAAA') {
      for (const data of aaaa.get(name) ?? []) answers.push({ ...base, type: 'AAAA', data });
    } else if (question?.type === 'MX') {
      for (const data of mx.get(name) ?? []) answers.push({ ...base, type: 'MX', data });
    } else if (question?.type === ('UNKNOWN_64' as string) || question?.type === ('UNKNOWN_65' as string)) {
      const table = question.type === ('UNKNOWN_64' as string) ? svcb : https;
      const type = question.type as 'NULL'; // dns-packet writes an unknown type's RDATA as given
      for (const record of table.get(name) ?? []) answers.push({ ...base, type, data: encodeSvcb(record) });
    }
    const answer = packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.AUTHORITATIVE_ANSWER | (known ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions,
      answers,
    });
    socket.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    txt,
    a,
    aaaa,
    mx,
    svcb,
    https,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
