/**
 * The directory of known AI agents and crawlers: the vendored ai.robots.txt list (`data/`, MIT,
 * see `data/NOTICE.md`) joined with our own category table. Upstream's `function` texts are free
 * prose, so every agent whose purpose is well documented gets its category from `ownTable`; the
 * rest fall back to a reading of the upstream text (`categoryFromFunction`).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/**
 * What a hit is. Disjoint: every event has exactly one.
 * - `human`: a person's browser, not arriving from an AI assistant;
 * - `ai_referred`: a person arriving from an AI assistant (chatgpt.com, perplexity.ai, ...);
 * - `ai_user_agent`: an AI assistant fetching a page because a user asked it now (ChatGPT-User);
 * - `ai_search`: an AI search index crawler (OAI-SearchBot, PerplexityBot);
 * - `ai_training`: a crawler collecting training data (GPTBot, ClaudeBot, CCBot);
 * - `browser_agent`: an agent driving a real browser (Web Bot Auth `Signature-Agent`, ChatGPT Agent);
 * - `other_bot`: any other automated client (search engines, monitors, curl, headless browsers).
 */
export const TrafficCategory = z.enum([
  'human',
  'ai_referred',
  'ai_user_agent',
  'ai_search',
  'ai_training',
  'browser_agent',
  'other_bot',
]);
export type TrafficCategory = z.infer<typeof TrafficCategory>;
export const trafficCategories = TrafficCategory.options;

/** Categories of automated AI clients (the "agent" side of agent-versus-human). */
export const aiAgentCategories: readonly TrafficCategory[] = [
  'ai_user_agent',
  'ai_search',
  'ai_training',
  'browser_agent',
];

/** Agent categories a directory entry may have (people are not in the directory). */
export const AgentCategory = z.enum([
  'ai_user_agent',
  'ai_search',
  'ai_training',
  'browser_agent',
  'other_bot',
]);
export type AgentCategory = z.infer<typeof AgentCategory>;

export const RobotsRespect = z.enum(['yes', 'no', 'unclear', 'discretion']);
export type RobotsRespect = z.infer<typeof RobotsRespect>;

export interface KnownAgent {
  /** Display name, also what is stored per event (`GPTBot`). */
  name: string;
  operator: string | null;
  category: AgentCategory;
  /** The `User-agent:` token for robots.txt. */
  robotsToken: string;
  respectsRobotsTxt: RobotsRespect;
  /** Upstream's description of what it does. */
  purpose: string | null;
  /** False for tokens that exist only in robots.txt (Google-Extended) or are too generic to find in a UA string. */
  matchesUserAgent: boolean;
}

const UpstreamFile = z.object({
  source: z.string(),
  commit: z.string(),
  retrieved: z.string(),
  license: z.string(),
  agents: z.record(
    z.string(),
    z.object({ operator: z.string().nullable(), respects_robots_txt: RobotsRespect, function: z.string() }),
  ),
});

interface Own {
  category: AgentCategory;
  operator?: string;
  /** Robots token only, or a name too generic to search for in user-agent strings. */
  noUserAgentMatch?: true;
}

/**
 * Our categories for the agents whose purpose their operators document. Operators are filled in
 * where upstream leaves them unclear.
 */
const ownTable: Record<string, Own> = {
  // Training data collection.
  GPTBot: { category: 'ai_training', operator: 'OpenAI' },
  ClaudeBot: { category: 'ai_training', operator: 'Anthropic' },
  'anthropic-ai': { category: 'ai_training', operator: 'Anthropic' },
  CCBot: { category: 'ai_training', operator: 'Common Crawl Foundation' },
  Bytespider: { category: 'ai_training', operator: 'ByteDance' },
  TikTokSpider: { category: 'ai_training', operator: 'ByteDance' },
  'meta-externalagent': { category: 'ai_training', operator: 'Meta' },
  FacebookBot: { category: 'ai_training', operator: 'Meta' },
  'Google-Extended': { category: 'ai_training', operator: 'Google', noUserAgentMatch: true },
  'Applebot-Extended': { category: 'ai_training', operator: 'Apple', noUserAgentMatch: true },
  'Webzio-Extended': { category: 'ai_training', operator: 'Webz.io', noUserAgentMatch: true },
  GoogleOther: { category: 'ai_training', operator: 'Google' },
  'GoogleOther-Image': { category: 'ai_training', operator: 'Google' },
  'GoogleOther-Video': { category: 'ai_training', operator: 'Google' },
  CloudVertexBot: { category: 'ai_training', operator: 'Google' },
  'Google-CloudVertexBot': { category: 'ai_training', operator: 'Google' },
  'cohere-training-data-crawler': { category: 'ai_training', operator: 'Cohere' },
  DeepSeekBot: { category: 'ai_training', operator: 'DeepSeek' },
  PanguBot: { category: 'ai_training', operator: 'Huawei' },
  AI2Bot: { category: 'ai_training', operator: 'Ai2' },
  'Ai2Bot-Dolma': { category: 'ai_training', operator: 'Ai2' },
  omgili: { category: 'ai_training', operator: 'Webz.io' },
  Diffbot: { category: 'ai_training', operator: 'Diffbot' },
  // AI search indexes.
  'OAI-SearchBot': { category: 'ai_search', operator: 'OpenAI' },
  'Claude-SearchBot': { category: 'ai_search', operator: 'Anthropic' },
  PerplexityBot: { category: 'ai_search', operator: 'Perplexity' },
  Amazonbot: { category: 'ai_search', operator: 'Amazon' },
  'Amzn-SearchBot': { category: 'ai_search', operator: 'Amazon' },
  Applebot: { category: 'ai_search', operator: 'Apple' },
  'AzureAI-SearchBot': { category: 'ai_search', operator: 'Microsoft' },
  DuckAssistBot: { category: 'ai_search', operator: 'DuckDuckGo' },
  'meta-webindexer': { category: 'ai_search', operator: 'Meta' },
  YouBot: { category: 'ai_search', operator: 'You.com' },
  PetalBot: { category: 'ai_search', operator: 'Huawei' },
  Bravebot: { category: 'ai_search', operator: 'Brave' },
  ExaSearchBot: { category: 'ai_search', operator: 'Exa' },
  ExaBot: { category: 'ai_search', operator: 'Exa' },
  YandexAdditional: { category: 'ai_search', operator: 'Yandex' },
  YandexAdditionalBot: { category: 'ai_search', operator: 'Yandex' },
  // Fetches made because a user asked an assistant now.
  'ChatGPT-User': { category: 'ai_user_agent', operator: 'OpenAI' },
  'Claude-User': { category: 'ai_user_agent', operator: 'Anthropic' },
  'Claude-Web': { category: 'ai_user_agent', operator: 'Anthropic' },
  'Claude-Code': { category: 'ai_user_agent', operator: 'Anthropic' },
  'Perplexity-User': { category: 'ai_user_agent', operator: 'Perplexity' },
  'MistralAI-User': { category: 'ai_user_agent', operator: 'Mistral AI' },
  'meta-externalfetcher': { category: 'ai_user_agent', operator: 'Meta' },
  'Amzn-User': { category: 'ai_user_agent', operator: 'Amazon' },
  'Kimi-User': { category: 'ai_user_agent', operator: 'Moonshot AI' },
  'kagi-fetcher': { category: 'ai_user_agent', operator: 'Kagi' },
  'Gemini-Deep-Research': { category: 'ai_user_agent', operator: 'Google' },
  'Google-NotebookLM': { category: 'ai_user_agent', operator: 'Google' },
  NotebookLM: { category: 'ai_user_agent', operator: 'Google' },
  'GoogleAgent-URLContext': { category: 'ai_user_agent', operator: 'Google' },
  'Google-Gemini-CLI': { category: 'ai_user_agent', operator: 'Google' },
  'cohere-ai': { category: 'ai_user_agent', operator: 'Cohere' },
  TongyiBot: { category: 'ai_user_agent', operator: 'Alibaba' },
  YiyanBot: { category: 'ai_user_agent', operator: 'Baidu' },
  'Shap-User': { category: 'ai_user_agent', operator: 'Parallel Web Systems' },
  'iaskspider/2.0': { category: 'ai_user_agent', operator: 'iAsk' },
  // Agents driving a browser.
  'ChatGPT Agent': { category: 'browser_agent', operator: 'OpenAI' },
  Operator: { category: 'browser_agent', operator: 'OpenAI', noUserAgentMatch: true },
  'Google-Agent': { category: 'browser_agent', operator: 'Google' },
  'GoogleAgent-Mariner': { category: 'browser_agent', operator: 'Google' },
  NovaAct: { category: 'browser_agent', operator: 'Amazon' },
  AmazonBuyForMe: { category: 'browser_agent', operator: 'Amazon' },
  'Manus-User': { category: 'browser_agent', operator: 'Butterfly Effect' },
  // Listed upstream, but not AI by their own account or too generic to match in a UA string.
  facebookexternalhit: { category: 'other_bot', operator: 'Meta' },
  Scrapy: { category: 'other_bot', operator: 'Zyte' },
  Code: { category: 'ai_user_agent', operator: 'GitHub', noUserAgentMatch: true },
  Cursor: { category: 'ai_user_agent', operator: 'Anysphere', noUserAgentMatch: true },
  Trae: { category: 'ai_user_agent', operator: 'ByteDance', noUserAgentMatch: true },
  Spider: { category: 'ai_training', noUserAgentMatch: true },
  LCC: { category: 'ai_training', noUserAgentMatch: true },
  YaK: { category: 'ai_training', operator: 'Meltwater', noUserAgentMatch: true },
  OpenAI: { category: 'ai_training', operator: 'OpenAI', noUserAgentMatch: true },
};

/** Upstream's `function` prose -> our category, for agents not in `ownTable`. */
export function categoryFromFunction(text: string): AgentCategory {
  if (/^AI Agents$/i.test(text.trim())) return 'browser_agent';
  if (/AI Assistants|Coding Agents|user[- ]initiated|user prompts|user queries/i.test(text))
    return 'ai_user_agent';
  if (/search/i.test(text)) return 'ai_search';
  return 'ai_training';
}

/** `MistralAI-User/1.0` and `MistralAI-User` are one agent; so are case variants. */
function baseName(token: string): string {
  return token.replace(/\/[\d.]+$/, '').replace(/ \d+(\.\d+)+$/, '');
}

export interface AgentDirectory {
  agents: readonly KnownAgent[];
  byName: ReadonlyMap<string, KnownAgent>;
  /** Finds the known agent named in a user-agent string. */
  matchUserAgent(userAgent: string): KnownAgent | undefined;
  source: { name: string; url: string; commit: string; retrieved: string; license: string };
}

export function loadAgentDirectory(
  file: URL = new URL('./data/ai-robots.json', import.meta.url),
): AgentDirectory {
  const upstream = UpstreamFile.parse(JSON.parse(readFileSync(file, 'utf8')));
  const byLower = new Map<string, KnownAgent>();
  for (const [token, entry] of Object.entries(upstream.agents)) {
    const own = ownTable[token];
    const name = baseName(token);
    const key = name.toLowerCase();
    const found = byLower.get(key);
    const agent: KnownAgent = {
      name: found?.name ?? name,
      operator: own?.operator ?? found?.operator ?? entry.operator,
      category: own?.category ?? found?.category ?? categoryFromFunction(entry.function),
      robotsToken: found?.robotsToken ?? name,
      respectsRobotsTxt:
        found && found.respectsRobotsTxt !== 'unclear' ? found.respectsRobotsTxt : entry.respects_robots_txt,
      purpose: found?.purpose ?? entry.function,
      matchesUserAgent: !(own?.noUserAgentMatch ?? false) && (found?.matchesUserAgent ?? true),
    };
    byLower.set(key, agent);
  }
  const agents = [...byLower.values()].sort((a, b) => a.name.localeCompare(b.name));

  // One alternation, longest names first, each a whole word: `GoogleOther` must not claim
  // `GoogleOther-Image`, and `Spider`-like names are excluded above.
  const matchable = agents.filter((a) => a.matchesUserAgent).sort((a, b) => b.name.length - a.name.length);
  const escaped = matchable.map((a) => a.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(`(?<![\\w-])(${escaped.join('|')})(?![\\w-])`, 'i');

  return {
    agents,
    byName: new Map(agents.map((a) => [a.name, a])),
    matchUserAgent(userAgent) {
      const m = pattern.exec(userAgent);
      return m ? byLower.get((m[1] as string).toLowerCase()) : undefined;
    },
    source: {
      name: 'ai.robots.txt',
      url: upstream.source,
      commit: upstream.commit,
      retrieved: upstream.retrieved,
      license: upstream.license,
    },
  };
}
