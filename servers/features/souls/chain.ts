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
 */
import { createHash } from 'node:crypto';

export const CHAIN_VERSION = 'soul-memory/1';

export interface ChainEntry {
  agent_id: string;
  sequence: number;
  layer: string;
  kind: string;
  content: string;
  content_digest: string;
  previous_digest: string | null;
  digest: string;
  writer_kind: string;
  writer_id: string;
  recorded_at: string;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

export function entryDigest(entry: Omit<ChainEntry, 'digest' | 'content'>): string {
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

/**
 * Checks a soul's whole log, in sequence order from 1: the first problem found (with its sequence),
 * or null when every entry is intact and linked.
 */
export function verifyChain(entries: readonly ChainEntry[]): { sequence: number; problem: string } | null {
  let previous: string | null = null;
  for (const [index, entry] of entries.entries()) {
    const at = entry.sequence;
    if (at !== index + 1) return { sequence: at, problem: `expected sequence ${index + 1}` };
    if (sha256Hex(entry.content) !== entry.content_digest)
      return { sequence: at, problem: 'content changed' };
    if (entry.previous_digest !== previous) return { sequence: at, problem: 'previous_digest does not link' };
    if (entryDigest(entry) !== entry.digest)
      return { sequence: at, problem: 'digest does not match the entry' };
    previous = entry.digest;
  }
  return null;
}
