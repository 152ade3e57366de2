/**
 * A real DNS server on loopback (UDP) answering TXT queries from a table, so domain verification by
 * TXT record is tested through Node's resolver against the wire protocol. Unknown names: NXDOMAIN.
 */
import { createSocket } from 'node:dgram';
import type { AddressInfo } from 'node:net';
import * as packet from 'dns-packet';

export interface TestDnsServer {
  /** `127.0.0.1:PORT`, for `sites.verification_dns_servers`. */
  address: string;
  /** TXT records per lowercase name; edit freely between queries. */
  txt: Map<string, string[]>;
  close(): Promise<void>;
}

export async function startDnsServer(): Promise<TestDnsServer> {
  const txt = new Map<string, string[]>();
  const socket = createSocket('udp4');
  socket.on('message', (message, peer) => {
    const query = packet.decode(message);
    const question = query.questions?.[0];
    const records = question && question.type === 'TXT' ? txt.get(question.name.toLowerCase()) : undefined;
    const answer = packet.encode({
      type: 'response',
      id: query.id,
      flags: packet.AUTHORITATIVE_ANSWER | (records ? 0 : 3), // rcode 3: NXDOMAIN
      questions: query.questions,
      answers: (records ?? []).map((data) => ({
        type: 'TXT' as const,
        name: question?.name ?? '',
        ttl: 60,
        class: 'IN' as const,
        data,
      })),
    });
    socket.send(answer, peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const { port } = socket.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    txt,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
