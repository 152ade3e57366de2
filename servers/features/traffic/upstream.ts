/**
 * ai.robots.txt's `robots.json` (https://github.com/ai-robots-txt/ai.robots.txt, MIT) reduced to
 * what `data/ai-robots.json` vendors. Upstream's fields are markdown prose; per robots.txt token we
 * keep the operator (a link's text; null where upstream says it is unclear), whether it respects
 * robots.txt (`yes`, `no`, `unclear`, `discretion` = left to whoever runs it) and the function text
 * with links reduced to their text. Descriptions and frequency are left out.
 */
import { z } from 'zod';

export const RobotsRespect = z.enum(['yes', 'no', 'unclear', 'discretion']);
export type RobotsRespect = z.infer<typeof RobotsRespect>;

/** One upstream entry as published (only the fields read here are required). */
export const UpstreamEntry = z.object({
  operator: z.string(),
  respect: z.string(),
  function: z.string(),
});
export const UpstreamRobots = z.record(z.string().min(1), UpstreamEntry);
export type UpstreamRobots = z.infer<typeof UpstreamRobots>;

export const VendoredAgent = z.object({
  operator: z.string().nullable(),
  respects_robots_txt: RobotsRespect,
  function: z.string(),
});
export type VendoredAgent = z.infer<typeof VendoredAgent>;

export const VendoredFile = z.object({
  $comment: z.string().optional(),
  source: z.string(),
  commit: z.string(),
  retrieved: z.string(),
  license: z.string(),
  agents: z.record(z.string(), VendoredAgent),
});
export type VendoredFile = z.infer<typeof VendoredFile>;

const COMMENT =
  'Derived from ai.robots.txt robots.json (MIT, see NOTICE.md beside this file) by `npm run refresh-agents`: ' +
  'per robots.txt token, the operator (markdown link text only; null where upstream says unclear), whether ' +
  'it respects robots.txt (yes | no | unclear | discretion = at the discretion of its users) and the upstream ' +
  'function text. Descriptions and frequency were left out. Our own categories, with the operator page each ' +
  'one follows, live in agent-categories.json beside this file.';

/** `[text](url)` -> `text`; whitespace collapsed. */
export function markdownText(value: string): string {
  return value
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

export function reduceRespect(value: string): RobotsRespect {
  const text = markdownText(value).toLowerCase();
  if (text.startsWith('unclear')) return 'unclear';
  if (/^yes\b/.test(text)) return 'yes';
  if (/^no\b/.test(text)) return 'no';
  if (text.includes('discretion')) return 'discretion';
  return 'unclear';
}

export function reduceOperator(value: string): string | null {
  const text = markdownText(value);
  return text === '' || /^unclear\b/i.test(text) ? null : text;
}

export function reduceUpstream(
  robots: UpstreamRobots,
  meta: { commit: string; retrieved: string },
): VendoredFile {
  const agents: Record<string, VendoredAgent> = {};
  for (const [token, entry] of Object.entries(robots)) {
    agents[token] = {
      operator: reduceOperator(entry.operator),
      respects_robots_txt: reduceRespect(entry.respect),
      function: markdownText(entry.function),
    };
  }
  return {
    $comment: COMMENT,
    source: `https://github.com/ai-robots-txt/ai.robots.txt/blob/${meta.commit}/robots.json`,
    commit: meta.commit,
    retrieved: meta.retrieved,
    license: 'MIT',
    agents,
  };
}
