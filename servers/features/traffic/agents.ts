/**
 * The directory of known AI agents and crawlers: the vendored ai.robots.txt list
 * (`data/ai-robots.json`, MIT, see `data/NOTICE.md`) joined with our own table
 * (`data/agent-categories.json`), which gives each agent whose operator documents it the category
 * that operator's own statement supports, with that page as its source, and adds agents announced
 * after upstream's list. Agents outside our table take the category read from upstream's prose
 * (`categoryFromFunction`).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { RobotsRespect, VendoredFile } from './upstream.ts';

export { RobotsRespect };

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

export interface KnownAgent {
  /** Display name, also what is stored per event (`GPTBot`). */
  name: string;
  operator: string | null;
  category: AgentCategory;
  /** The operator's page the category follows; null when it is read from upstream's text. */
  categorySource: string | null;
  /** The `User-agent:` token for robots.txt. */
  robotsToken: string;
  respectsRobotsTxt: RobotsRespect;
  /** What it does: upstream's text, or ours for agents upstream does not list yet. */
  purpose: string | null;
  /** False for tokens that exist only in robots.txt (Google-Extended) or are too generic to find in a UA string. */
  matchesUserAgent: boolean;
}

const OwnEntry = z
  .strictObject({
    category: AgentCategory.optional(),
    operator: z.string().min(1).optional(),
    /** URL of the operator's own statement of what the agent is for. */
    source: z.url().nullable().optional(),
    /** Why the category was chosen where no operator page was found. */
    note: z.string().min(1).optional(),
    /** Robots token only, or a name too generic to search for in user-agent strings. */
    noUserAgentMatch: z.literal(true).optional(),
    /** Both given for an agent upstream does not list yet; `purpose` marks such an entry. */
    respects_robots_txt: RobotsRespect.optional(),
    purpose: z.string().min(1).optional(),
  })
  .refine((e) => e.category === undefined || e.source || e.note, {
    message: 'a category needs the operator page it follows (source) or a note saying why',
  });
type OwnEntry = z.infer<typeof OwnEntry>;

const CategoryFile = z.object({
  $comment: z.string().optional(),
  checked: z.iso.date(),
  agents: z.record(z.string().min(1), OwnEntry),
});

const DATA = new URL('./data/', import.meta.url);

/** Our category table, by robots token as written in `data/agent-categories.json`. */
export function loadCategoryTable(
  file: URL = new URL('agent-categories.json', DATA),
): Record<string, OwnEntry> {
  return CategoryFile.parse(JSON.parse(readFileSync(file, 'utf8'))).agents;
}

/** Upstream's `function` prose -> our category, for agents our table gives none. */
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

export function loadAgentDirectory(files: { upstream?: URL; categories?: URL } = {}): AgentDirectory {
  const upstream = VendoredFile.parse(
    JSON.parse(readFileSync(files.upstream ?? new URL('ai-robots.json', DATA), 'utf8')),
  );
  const own = new Map<string, OwnEntry & { token: string }>();
  for (const [token, entry] of Object.entries(loadCategoryTable(files.categories))) {
    own.set(baseName(token).toLowerCase(), { ...entry, token });
  }
  const byLower = new Map<string, KnownAgent>();
  for (const [token, entry] of Object.entries(upstream.agents)) {
    const name = baseName(token);
    const key = name.toLowerCase();
    const ours = own.get(key);
    const found = byLower.get(key);
    byLower.set(key, {
      name: found?.name ?? name,
      operator: ours?.operator ?? found?.operator ?? entry.operator,
      category: ours?.category ?? found?.category ?? categoryFromFunction(entry.function),
      categorySource: ours?.category ? (ours.source ?? null) : null,
      robotsToken: found?.robotsToken ?? name,
      respectsRobotsTxt:
        found && found.respectsRobotsTxt !== 'unclear' ? found.respectsRobotsTxt : entry.respects_robots_txt,
      purpose: found?.purpose ?? entry.function,
      matchesUserAgent: !(ours?.noUserAgentMatch ?? false),
    });
  }
  // Agents announced after upstream's list carry everything upstream would (an entry with a
  // `purpose` is an agent in its own right). Entries that only annotate an agent upstream no longer
  // lists are left out; `npm run refresh-agents` reports them.
  for (const [key, entry] of own) {
    if (byLower.has(key) || entry.purpose === undefined) continue;
    const { token } = entry;
    if (!entry.category || !entry.source || !entry.respects_robots_txt || !entry.purpose || !entry.operator) {
      throw new Error(
        `agent-categories.json: ${token} is not in ai-robots.json, so it needs category, operator, source, respects_robots_txt and purpose`,
      );
    }
    byLower.set(key, {
      name: baseName(token),
      operator: entry.operator,
      category: entry.category,
      categorySource: entry.source,
      robotsToken: baseName(token),
      respectsRobotsTxt: entry.respects_robots_txt,
      purpose: entry.purpose,
      matchesUserAgent: !(entry.noUserAgentMatch ?? false),
    });
  }
  const agents = [...byLower.values()].sort((a, b) => a.name.localeCompare(b.name));

  // One alternation, longest names first, so `GoogleOther-Image` wins over `GoogleOther`. A name
  // must not continue a longer word on either side (`Spider`-like names are excluded above), but
  // may follow a hyphen: `x-ChatGPT-User/1.0` names ChatGPT-User.
  const matchable = agents.filter((a) => a.matchesUserAgent).sort((a, b) => b.name.length - a.name.length);
  const escaped = matchable.map((a) => a.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  const pattern = new RegExp(`(?<![A-Za-z0-9_])(${escaped.join('|')})(?![\\w-])`, 'i');

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
