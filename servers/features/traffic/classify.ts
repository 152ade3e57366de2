/**
 * Classifies one hit as a person or an agent, and which one. Order matters:
 *
 * 1. a Web Bot Auth `Signature-Agent` header (draft-meunier-web-bot-auth-architecture) names an
 *    agent that signs its requests: `browser_agent`, even when its user agent is a stock Chrome
 *    (ChatGPT Agent does exactly that);
 * 2. a known AI agent named in the user agent (`agents.ts`) takes its category;
 * 3. any other bot pattern (isbot) is `other_bot`;
 * 4. otherwise a person: `ai_referred` when the referrer (or a `utm_source` the assistant appends)
 *    is an AI assistant, else `human`.
 */
import { isbot, isbotMatch } from 'isbot';
import { type Item, parseDictionary, parseItem } from 'structured-headers';
import type { AgentDirectory, TrafficCategory } from './agents.ts';

export interface Hit {
  userAgent: string;
  /** Full referrer URL (document.referrer or the Referer log field). */
  referrer?: string | null | undefined;
  /** The page URL; its `utm_source` may name the assistant that sent the visitor. */
  url?: string | null | undefined;
  /** Request headers with lower-case names (only agent-identifying ones are read). */
  headers?: Record<string, string | undefined> | undefined;
}

export interface Classification {
  category: TrafficCategory;
  /** Agent or assistant name (`GPTBot`, `ChatGPT` for a referral), null for plain humans. */
  agent: string | null;
  operator: string | null;
}

/** AI assistants that send people to sites, by referrer host (and the `utm_source` they append). */
export const aiReferrers: readonly { hosts: string[]; name: string; operator: string }[] = [
  { hosts: ['chatgpt.com', 'chat.openai.com'], name: 'ChatGPT', operator: 'OpenAI' },
  { hosts: ['perplexity.ai'], name: 'Perplexity', operator: 'Perplexity' },
  { hosts: ['claude.ai'], name: 'Claude', operator: 'Anthropic' },
  { hosts: ['gemini.google.com', 'bard.google.com'], name: 'Gemini', operator: 'Google' },
  {
    hosts: ['copilot.microsoft.com', 'copilot.cloud.microsoft', 'm365.cloud.microsoft'],
    name: 'Copilot',
    operator: 'Microsoft',
  },
  { hosts: ['chat.mistral.ai'], name: 'Le Chat', operator: 'Mistral AI' },
  { hosts: ['chat.deepseek.com'], name: 'DeepSeek', operator: 'DeepSeek' },
  { hosts: ['meta.ai'], name: 'Meta AI', operator: 'Meta' },
  { hosts: ['grok.com'], name: 'Grok', operator: 'xAI' },
  { hosts: ['you.com'], name: 'You.com', operator: 'You.com' },
];

const referrerByHost = new Map<string, { name: string; operator: string }>();
for (const r of aiReferrers) for (const host of r.hosts) referrerByHost.set(host, r);

/** Web Bot Auth signers we can name; any other signer is recorded by its host. */
const signatureAgents: Record<string, { name: string; operator: string }> = {
  'chatgpt.com': { name: 'ChatGPT Agent', operator: 'OpenAI' },
  'openai.com': { name: 'ChatGPT Agent', operator: 'OpenAI' },
};

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase().replace(/^www\./, '');
  } catch {
    return null;
  }
}

/** The AI assistant a referrer URL or a `utm_source` value points at, if any. */
export function aiReferrer(
  referrer: string | null | undefined,
  pageUrl?: string | null,
): { name: string; operator: string } | undefined {
  if (referrer) {
    const host = hostOf(referrer);
    if (host) {
      const found = referrerByHost.get(host) ?? referrerByHost.get(host.split('.').slice(-2).join('.'));
      if (found) return found;
    }
  }
  if (pageUrl?.includes('utm_source=')) {
    const match = /[?&]utm_source=([^&#]+)/.exec(pageUrl);
    if (match) {
      const source = decodeURIComponent(match[1] as string)
        .toLowerCase()
        .replace(/^www\./, '');
      return referrerByHost.get(source);
    }
  }
  return undefined;
}

/**
 * The signer's origin from `Signature-Agent`. The draft first made it a structured string
 * (`"https://chatgpt.com"`), later a dictionary (`sig1="https://chatgpt.com"`); both are read.
 * Returns null for a header that is neither.
 */
export function parseSignatureAgent(value: string): string | null {
  const stringOf = (item: Item | unknown): string | null => {
    const bare = Array.isArray(item) ? item[0] : null;
    return typeof bare === 'string' ? bare : null;
  };
  try {
    const found = stringOf(parseItem(value));
    if (found) return found;
  } catch {
    // not an item; try a dictionary
  }
  try {
    for (const member of parseDictionary(value).values()) {
      const found = stringOf(member);
      if (found) return found;
    }
  } catch {
    // malformed
  }
  return null;
}

function signatureAgent(headers: Hit['headers']): Classification | null {
  const value = headers?.['signature-agent'];
  if (value) {
    const origin = parseSignatureAgent(value);
    const host = origin ? (hostOf(origin) ?? origin) : null;
    const known = host ? signatureAgents[host] : undefined;
    return {
      category: 'browser_agent',
      agent: known?.name ?? host ?? 'Web Bot Auth signer',
      operator: known?.operator ?? null,
    };
  }
  // A request signed for Web Bot Auth without naming its directory (RFC 9421 `tag="web-bot-auth"`).
  if (headers?.signature && headers['signature-input']?.includes('web-bot-auth')) {
    return { category: 'browser_agent', agent: 'Web Bot Auth signer', operator: null };
  }
  return null;
}

/** The product token around isbot's match: `Googlebot/2.1` -> `Googlebot`, `curl/8.4.0` -> `curl`. */
export function botName(userAgent: string): string | null {
  const match = isbotMatch(userAgent);
  if (!match) return null;
  const at = userAgent.toLowerCase().indexOf(match.toLowerCase());
  if (at < 0) return match;
  let start = at;
  let end = at + match.length;
  while (start > 0 && /[\w.-]/.test(userAgent[start - 1] as string)) start--;
  while (end < userAgent.length && /[\w.-]/.test(userAgent[end] as string)) end++;
  const token = userAgent.slice(start, end) || match;
  return token.split('/')[0] || token;
}

export class Classifier {
  readonly directory: AgentDirectory;
  /** User agents repeat: the UA-only part of the verdict is cached (bounded, oldest out first). */
  readonly #byUserAgent = new Map<string, Classification | null>();
  readonly #cacheSize: number;

  constructor(directory: AgentDirectory, cacheSize = 10_000) {
    this.directory = directory;
    this.#cacheSize = cacheSize;
  }

  classify(hit: Hit): Classification {
    const signed = signatureAgent(hit.headers);
    if (signed) return signed;
    const automated = this.#fromUserAgent(hit.userAgent);
    if (automated) return automated;
    const referrer = aiReferrer(hit.referrer, hit.url);
    if (referrer) return { category: 'ai_referred', agent: referrer.name, operator: referrer.operator };
    return { category: 'human', agent: null, operator: null };
  }

  #fromUserAgent(userAgent: string): Classification | null {
    const cached = this.#byUserAgent.get(userAgent);
    if (cached !== undefined) return cached;
    let verdict: Classification | null = null;
    const known = this.directory.matchUserAgent(userAgent);
    if (known) {
      verdict = { category: known.category, agent: known.name, operator: known.operator };
    } else if (userAgent.trim() === '') {
      // Every browser sends one; an empty user agent is a script.
      verdict = { category: 'other_bot', agent: null, operator: null };
    } else if (isbot(userAgent)) {
      verdict = { category: 'other_bot', agent: botName(userAgent), operator: null };
    }
    if (this.#byUserAgent.size >= this.#cacheSize) {
      const oldest = this.#byUserAgent.keys().next();
      if (!oldest.done) this.#byUserAgent.delete(oldest.value);
    }
    this.#byUserAgent.set(userAgent, verdict);
    return verdict;
  }
}
