/**
 * Classifies one hit as a person or an agent, and which one. Order matters:
 *
 * 1. a Web Bot Auth `Signature-Agent` header (draft-meunier-web-bot-auth-architecture) names an
 *    agent that signs its requests: `browser_agent`, even when its user agent is a stock Chrome
 *    (ChatGPT Agent does exactly that);
 * 2. a known AI agent named in the user agent (`agents.ts`) takes its category;
 * 3. any other bot pattern (isbot) is `other_bot`, named by its product token (`botName`);
 * 4. otherwise a person: `ai_referred` when the referrer (or a `utm_source` the assistant appends)
 *    is an AI assistant, else `human`.
 */
import { isbot, isbotMatches } from 'isbot';
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

/** Words of browser and platform tokens, never a bot's name. */
const NOT_A_NAME = new Set([
  'mozilla',
  'compatible',
  'khtml',
  'like',
  'gecko',
  'applewebkit',
  'safari',
  'chrome',
  'mobile',
  'version',
  'windows',
  'nt',
  'linux',
  'x11',
  'macintosh',
  'intel',
  'mac',
  'os',
  'x',
  'android',
  'u',
  'win64',
  'x64',
  'wow64',
  'x86_64',
  'cpu',
  'iphone',
  'ipad',
  'unknown',
  'build',
]);
/** Product names that say what a client is: crawlers, fetchers, HTTP libraries, headless browsers. */
const BOT_WORD =
  /bot|crawl|spider|fetch|scan|slurp|inspect|preview|headless|monitor|archiver|checker|http|client|request|curl|wget|lighthouse/i;

/**
 * A bot's name from its user agent: the product token (RFC 9110, section 10.1.5: `name/version`)
 * that names the client - `Googlebot/2.1` -> `Googlebot`, `python-requests/2.31` ->
 * `python-requests`, `Mozilla/5.0 (compatible; Google-InspectionTool/1.0)` ->
 * `Google-InspectionTool`. Never a browser word (`Mozilla`), a URL or a version.
 */
export function botName(userAgent: string): string | null {
  const names: string[] = [];
  for (const piece of userAgent.split(/[\s;()[\],+]+/)) {
    // URLs, e-mail addresses and `scheme:thing` parts (`dart:io`) name no product.
    if (/^[a-z][\w+.-]*:|^www\.|@/i.test(piece)) continue;
    const name = (piece.split('/')[0] as string)
      .replace(/_version.*$/i, '')
      .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
    if (name.length < 2 || /^v?\d/i.test(name) || NOT_A_NAME.has(name.toLowerCase())) continue;
    names.push(name);
  }
  const named = names.find((n) => BOT_WORD.test(n));
  if (named) return named;
  // isbot's own pattern, where it is a product name rather than a generic word or the whole string.
  for (const match of isbotMatches(userAgent)) {
    const lower = match.toLowerCase();
    const found = names.find((n) => n.toLowerCase().includes(lower) && lower.length >= 4);
    if (found) return found;
  }
  return names[0] ?? null;
}

/** HTTP libraries isbot does not know; none appears in a browser's user agent. */
const LIBRARY = /\(dart:io\)/;

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
    } else if (isbot(userAgent) || LIBRARY.test(userAgent)) {
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
