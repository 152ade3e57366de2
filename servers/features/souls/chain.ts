/**
 * The hash chain of a soul's memories: each entry's digest covers its content digest, its place in
 * the log and the digest of the entry before it, so a reader who recomputes the chain from the first
 * entry sees any entry removed, reordered or changed.
 *
 *   content_digest = hex SHA-256 of the content (UTF-8)
 *   digest = hex SHA-256 of the UTF-8 JSON array
 *     ["soul-memory/1", agent_id, sequence, layer, kind, content_digest, writer_kind, writer_id,
 *      recorded_at, previous_digest]
 *   previous_digest = the digest of entry sequence - 1 (null for sequence 1)
 *
 * `recorded_at` is the ISO 8601 text with milliseconds and `Z` (as `Date.toISOString` writes it).
 * docs/guides/souls.md states the same for readers; test/integration/souls.test.ts checks logs with its
 * own implementation of it.
 */
import { createHash } from 'node:crypto';

export const CHAIN_VERSION = 'soul-memory/1';

/** The fields an entry's digest covers. */
export interface ChainFields {
  agent_id: string;
  sequence: number;
  layer: string;
  kind: string;
  content_digest: string;
  previous_digest: string | null;
  writer_kind: string;
  writer_id: string;
  recorded_at: string;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function entryDigest(entry: ChainFields): string {
  return sha256Hex(
    JSON.stringify([
      CHAIN_VERSION,
      entry.agent_id,
      entry.sequence,
      entry.layer,
      entry.kind,
      entry.content_digest,
      entry.writer_kind,
      entry.writer_id,
      entry.recorded_at,
      entry.previous_digest,
    ]),
  );
}
