/**
 * A real DNS server on loopback (UDP) answering TXT and A queries from tables, so domain
 * verification by TXT record, and names that resolve to loopback fixture sites (live merchant
 * resolution), are tested through Node's resolver against the wire protocol. Unknown names:
 * NXDOMAIN; a known name asked for another type: no records (NODATA).
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

export interface TestDnsServer {
  /** `127.0.0.1:PORT`, for `sites.verification_dns_servers`. */
  address: string;
  /** TXT records per lowercase name; edit freely between queries. */
  txt: Map<string, string[]>;
  /** IPv4 addresses (A records) per lowercase name; edit freely between queries. */
  a: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const a = new Map<string, string[]>();
  const socket = createSocket('udp4');
  socket.on('message', (message, peer) => {
    const query = packet.decode(message);
    const question = query.questions?.[0];
    const name = question?.name.toLowerCase() ?? '';
    const known = txt.has(name) || a.has(name);
    const answers: packet.Answer[] = [];
    if (question?.type === 'TXT') {
      for (const data of txt.get(name) ?? []) {
        answers.push({ type: 'TXT', name: question.name, ttl: 60, class: 'IN', data });
      }
    } else if (question?.type === 'A') {
      for (const data of a.get(name) ?? []) {
        answers.push({ type: 'A', name: question.name, ttl: 60, class: 'IN', data });
      }
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
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
