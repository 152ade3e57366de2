/**
 * robots.txt as AI agents read it (RFC 9309): for each AI agent token, whether a group names it and
 * whether `/` is allowed to it, plus the `Content-Signal` lines of the Content Signals Policy
 * (contentsignals.org: `Content-Signal: search=yes, ai-train=no, ai-input=yes`). Rule matching is
 * robots-parser's; it is given the product token, never a full user agent string.
 */
import robotsParserCjs from 'robots-parser';
import { parseDictionary, Token } from 'structured-headers';

/** robots-parser is CommonJS typed as an ES default export; Node's default import is `module.exports`. */
export const robotsParser = robotsParserCjs as unknown as typeof robotsParserCjs.default;

/** What an AI agent does with what it fetches (notes/domain.md; ai-robots-txt categories). */
export type AgentCategory = 'training' | 'search' | 'user';

/** AI agent robots.txt tokens the scan reports on, with what each is used for. */
export const aiAgents: readonly { token: string; operator: string; category: AgentCategory }[] = [
  { token: 'GPTBot', operator: 'OpenAI', category: 'training' },
  { token: 'OAI-SearchBot', operator: 'OpenAI', category: 'search' },
  { token: 'ChatGPT-User', operator: 'OpenAI', category: 'user' },
  { token: 'ClaudeBot', operator: 'Anthropic', category: 'training' },
  { token: 'Claude-SearchBot', operator: 'Anthropic', category: 'search' },
  { token: 'Claude-User', operator: 'Anthropic', category: 'user' },
  { token: 'PerplexityBot', operator: 'Perplexity', category: 'search' },
  { token: 'Perplexity-User', operator: 'Perplexity', category: 'user' },
  { token: 'Google-Extended', operator: 'Google', category: 'training' },
  { token: 'Applebot-Extended', operator: 'Apple', category: 'training' },
  { token: 'CCBot', operator: 'Common Crawl', category: 'training' },
  { token: 'Bytespider', operator: 'ByteDance', category: 'training' },
  { token: 'meta-externalagent', operator: 'Meta', category: 'training' },
  { token: 'Amazonbot', operator: 'Amazon', category: 'search' },
  { token: 'MistralAI-User', operator: 'Mistral', category: 'user' },
  { token: 'DuckAssistBot', operator: 'DuckDuckGo', category: 'search' },
];

export interface AgentRule {
  token: string;
  category: AgentCategory;
  /** A group names this token (not only `*`). */
  named: boolean;
  /** Whether the agent may fetch `/` under the rules that apply to it. */
  allowed_root: boolean;
}

export interface ContentSignal {
  /** The user agents of the group the line appeared in (`*` when outside any group). */
  user_agents: string[];
  /** Signal name -> yes/no, e.g. `{ search: true, 'ai-train': false }`. */
  signals: Record<string, boolean>;
  raw: string;
}

export interface RobotsFacts {
  present: boolean;
  /** Every user-agent named by a group, as written. */
  user_agents: string[];
  agents: AgentRule[];
  content_signals: ContentSignal[];
  sitemaps: string[];
  /** `/` disallowed for `*`. */
  blocks_everyone: boolean;
}

/** A missing robots.txt allows everything (RFC 9309 section 2.3.1.3). */
export function absentRobots(): RobotsFacts {
  return {
    present: false,
    user_agents: [],
    agents: aiAgents.map((a) => ({ token: a.token, category: a.category, named: false, allowed_root: true })),
    content_signals: [],
    sitemaps: [],
    blocks_everyone: false,
  };
}

export function parseRobots(robotsUrl: string, text: string): RobotsFacts {
  const robots = robotsParser(robotsUrl, text);
  const root = new URL('/', robotsUrl).href;
  const { userAgents, contentSignals } = scanLines(text);
  const named = new Set(userAgents.map((ua) => ua.toLowerCase()));
  return {
    present: true,
    user_agents: userAgents,
    agents: aiAgents.map((a) => ({
      token: a.token,
      category: a.category,
      named: named.has(a.token.toLowerCase()),
      allowed_root: robots.isAllowed(root, a.token) !== false,
    })),
    content_signals: contentSignals,
    sitemaps: robots.getSitemaps(),
    blocks_everyone: robots.isAllowed(root, '*') === false,
  };
}

/** Group user agents and Content-Signal lines; robots-parser keeps neither. */
function scanLines(text: string): { userAgents: string[]; contentSignals: ContentSignal[] } {
  const userAgents: string[] = [];
  const contentSignals: ContentSignal[] = [];
  let group: string[] = [];
  let groupHasRules = false;
  for (const rawLine of text.split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const field = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (field === 'user-agent') {
      // Consecutive user-agent lines share one group (RFC 9309 section 2.1).
      if (groupHasRules) {
        group = [];
        groupHasRules = false;
      }
      group.push(value);
      if (value && !userAgents.includes(value)) userAgents.push(value);
    } else if (field === 'content-signal') {
      groupHasRules = true;
      contentSignals.push({
        user_agents: group.length ? [...group] : ['*'],
        signals: parseSignals(value),
        raw: value,
      });
    } else if (field === 'allow' || field === 'disallow' || field === 'crawl-delay') {
      groupHasRules = true;
    }
  }
  return { userAgents, contentSignals };
}

/** `search=yes, ai-train=no` as a Structured Field dictionary (RFC 9651), loosely when that fails. */
export function parseSignals(value: string): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  try {
    for (const [key, [item]] of parseDictionary(value)) {
      const v = item instanceof Token ? item.toString() : String(item);
      if (v === 'yes' || v === 'no') out[key] = v === 'yes';
    }
    return out;
  } catch {
    for (const part of value.split(',')) {
      const [key, v] = part.split('=').map((s) => s.trim().toLowerCase());
      if (key && (v === 'yes' || v === 'no')) out[key] = v === 'yes';
    }
    return out;
  }
}
