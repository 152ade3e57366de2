/**
 * The agent-versus-human classifier against real user-agent strings (test/fixtures/user-agents.ts):
 * agents as their operators publish them, bots and libraries as they appear in server logs, and
 * people's browsers, which must never be taken for bots.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  aiAgentCategories,
  categoryFromFunction,
  loadAgentDirectory,
} from '../../servers/features/traffic/agents.ts';
import {
  aiReferrer,
  botName,
  Classifier,
  parseSignatureAgent,
} from '../../servers/features/traffic/classify.ts';
import { reduceUpstream } from '../../servers/features/traffic/upstream.ts';
import { agents, otherBots, people } from '../fixtures/user-agents.ts';

const directory = loadAgentDirectory();
const classifier = new Classifier(directory);

const chrome = people[0] as string;

describe('classifier on real user-agent strings', () => {
  it.each(agents)('%s -> %s (%s)', (userAgent, category, agent, operator) => {
    expect(classifier.classify({ userAgent })).toEqual({ category, agent, operator });
  });

  it.each(otherBots)('%s -> %s (%s)', (userAgent, category, agent, operator) => {
    expect(classifier.classify({ userAgent })).toEqual({ category, agent, operator });
  });

  it('never takes a person for a bot, and no known agent name hides in a browser string', () => {
    const misread = people
      .map((userAgent) => ({ userAgent, verdict: classifier.classify({ userAgent }) }))
      .filter(({ verdict }) => verdict.category !== 'human');
    expect(misread).toEqual([]);
    expect(people.filter((ua) => directory.matchUserAgent(ua))).toEqual([]);
  });

  it('gives the same verdict from its cache', () => {
    const ua = agents[0]?.[0] as string;
    expect(classifier.classify({ userAgent: ua })).toEqual(classifier.classify({ userAgent: ua }));
  });

  it('matches a name after a hyphen, never one inside a longer word', () => {
    expect(directory.matchUserAgent('prefix-GPTBot/1.1')?.name).toBe('GPTBot');
    expect(directory.matchUserAgent('Mozilla/5.0 (compatible; -PerplexityBot/1.0)')?.name).toBe(
      'PerplexityBot',
    );
    for (const ua of ['NotGPTBot/1.0', 'GPTBotX/1.0', 'ChatGPT-UserAgent/1.0', 'MyClaudeBot/2']) {
      expect(directory.matchUserAgent(ua), ua).toBeUndefined();
    }
    // The longest name wins where one name continues another.
    expect(directory.matchUserAgent('Mozilla/5.0 (compatible; GoogleOther-Image/1.0)')?.name).toBe(
      'GoogleOther-Image',
    );
  });

  it('does not let a generic robots token claim an unrelated crawler', () => {
    // `Spider` and `Code` are robots.txt tokens upstream; Baiduspider is a search engine.
    const baidu = 'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)';
    expect(classifier.classify({ userAgent: baidu })).toMatchObject({
      category: 'other_bot',
      agent: 'Baiduspider',
    });
  });

  it('names a bot by its product, never by a browser word, a URL or a version', () => {
    for (const [userAgent] of otherBots) {
      const name = botName(userAgent);
      if (userAgent === '') continue;
      expect(name, userAgent).not.toMatch(/^(mozilla|compatible|https?|www|\d.*)$/i);
      expect(name, userAgent).not.toMatch(/[\s/:()]/);
    }
  });
});

describe('Web Bot Auth and agent headers', () => {
  it('classifies a signed Chrome as the browser agent it names (ChatGPT Agent)', () => {
    const result = classifier.classify({
      userAgent: chrome,
      headers: { 'signature-agent': '"https://chatgpt.com"' },
    });
    expect(result).toEqual({ category: 'browser_agent', agent: 'ChatGPT Agent', operator: 'OpenAI' });
  });

  it('reads the dictionary form of Signature-Agent and names unknown signers by host', () => {
    expect(parseSignatureAgent('sig1="https://agent.example.com"')).toBe('https://agent.example.com');
    const result = classifier.classify({
      userAgent: chrome,
      headers: { 'signature-agent': 'sig1="https://agent.example.com"' },
    });
    expect(result).toEqual({ category: 'browser_agent', agent: 'agent.example.com', operator: null });
  });

  it('counts a web-bot-auth signature without Signature-Agent as a browser agent', () => {
    const result = classifier.classify({
      userAgent: chrome,
      headers: {
        signature: 'sig1=:dGVzdA==:',
        'signature-input': 'sig1=("@authority");created=1735689600;keyid="k";tag="web-bot-auth"',
      },
    });
    expect(result.category).toBe('browser_agent');
  });

  it('falls back to the user agent when Signature-Agent is malformed', () => {
    expect(parseSignatureAgent('(((')).toBeNull();
    const result = classifier.classify({ userAgent: chrome, headers: { 'signature-agent': '(((' } });
    expect(result).toEqual({ category: 'browser_agent', agent: 'Web Bot Auth signer', operator: null });
  });
});

describe('AI referrals', () => {
  it.each([
    ['https://chatgpt.com/', 'ChatGPT'],
    ['https://chat.openai.com/c/abc', 'ChatGPT'],
    ['https://www.perplexity.ai/search?q=shoes', 'Perplexity'],
    ['https://claude.ai/chat/123', 'Claude'],
    ['https://gemini.google.com/app', 'Gemini'],
    ['https://copilot.microsoft.com/', 'Copilot'],
  ])('a person from %s is ai_referred (%s)', (referrer, name) => {
    expect(classifier.classify({ userAgent: chrome, referrer })).toMatchObject({
      category: 'ai_referred',
      agent: name,
    });
  });

  it('reads utm_source=chatgpt.com when the referrer is stripped', () => {
    expect(aiReferrer(null, 'https://shop.example/p/1?utm_source=chatgpt.com')?.name).toBe('ChatGPT');
    expect(
      classifier.classify({
        userAgent: chrome,
        referrer: '',
        url: 'https://shop.example/?utm_source=chatgpt.com',
      }).category,
    ).toBe('ai_referred');
  });

  it('keeps other referrers human, and a bot stays a bot whatever its referrer', () => {
    expect(classifier.classify({ userAgent: chrome, referrer: 'https://www.google.com/' }).category).toBe(
      'human',
    );
    expect(classifier.classify({ userAgent: chrome, referrer: 'not a url' }).category).toBe('human');
    expect(classifier.classify({ userAgent: 'curl/8.4.0', referrer: 'https://chatgpt.com/' }).category).toBe(
      'other_bot',
    );
  });
});

describe('agent directory', () => {
  it('holds the vendored list with our categories and merges duplicate tokens', () => {
    expect(directory.agents.length).toBeGreaterThan(160);
    expect(directory.byName.get('GPTBot')).toMatchObject({
      operator: 'OpenAI',
      category: 'ai_training',
      categorySource: 'https://developers.openai.com/api/docs/bots',
      robotsToken: 'GPTBot',
      respectsRobotsTxt: 'yes',
    });
    expect(directory.byName.get('Bytespider')?.respectsRobotsTxt).toBe('no');
    expect(directory.byName.get('Google-Extended')).toMatchObject({
      matchesUserAgent: false,
      operator: 'Google',
    });
    const names = directory.agents.map((a) => a.name.toLowerCase());
    expect(new Set(names).size).toBe(names.length);
    expect(names).not.toContain('mistralai-user/1.0');
    expect(directory.source).toMatchObject({
      name: 'ai.robots.txt',
      license: 'MIT',
      commit: expect.stringMatching(/^[0-9a-f]{40}$/),
    });
  });

  it('holds the fetchers and indexers operators announced after the upstream list, with their pages', () => {
    const announced = {
      'OAI-AdsBot': ['other_bot', 'OpenAI', 'https://developers.openai.com/api/docs/bots'],
      'meta-externalads': [
        'other_bot',
        'Meta',
        'https://developers.facebook.com/docs/sharing/webmasters/web-crawlers/',
      ],
      'Google-GeminiNotebook': [
        'ai_user_agent',
        'Google',
        'https://developers.google.com/crawling/docs/crawlers-fetchers/google-user-triggered-fetchers',
      ],
      'MistralAI-Index': ['ai_search', 'Mistral AI', 'https://docs.mistral.ai/en/robots'],
      'MistralAI-Training': ['ai_training', 'Mistral AI', 'https://docs.mistral.ai/en/robots'],
    };
    for (const [name, [category, operator, source]] of Object.entries(announced)) {
      expect(directory.byName.get(name), name).toMatchObject({
        category,
        operator,
        categorySource: source,
        matchesUserAgent: true,
      });
      expect(directory.byName.get(name)?.purpose).toBeTruthy();
    }
  });

  it('follows each operator page for the category, and records it beside the category', () => {
    const table = JSON.parse(
      readFileSync(
        new URL('../../servers/features/traffic/data/agent-categories.json', import.meta.url),
        'utf8',
      ),
    ).agents as Record<string, { category?: string; source?: string | null; note?: string }>;
    for (const [token, entry] of Object.entries(table)) {
      if (!entry.category) continue;
      expect(entry.source || entry.note, token).toBeTruthy();
      if (entry.source) expect(entry.source, token).toMatch(/^https?:\/\//);
    }
    // Where an operator says what a crawler is for, that is the category, whatever upstream's prose says.
    expect(directory.byName.get('GoogleOther')).toMatchObject({ category: 'other_bot' });
    expect(directory.byName.get('DuckAssistBot')).toMatchObject({
      category: 'ai_user_agent',
      categorySource: expect.stringContaining('duckassistbot'),
    });
  });

  it('refuses a category without its source, and an added agent without what upstream would give', () => {
    const dir = mkdtempSync(join(tmpdir(), 'agents-'));
    const write = (agents: unknown) => {
      const file = join(dir, `categories-${Math.random().toString(36).slice(2)}.json`);
      writeFileSync(file, JSON.stringify({ checked: '2026-11-22', agents }));
      return pathToFileURL(file);
    };
    expect(() => loadAgentDirectory({ categories: write({ GPTBot: { category: 'ai_search' } }) })).toThrow(
      /source/,
    );
    expect(() =>
      loadAgentDirectory({
        categories: write({
          'New-Bot': { category: 'ai_search', source: 'https://example.com/bots', purpose: 'Indexes.' },
        }),
      }),
    ).toThrow(/New-Bot/);
  });

  it('reads upstream purpose prose into a category for agents outside our table', () => {
    expect(categoryFromFunction('AI Search Crawlers')).toBe('ai_search');
    expect(categoryFromFunction('AI Assistants')).toBe('ai_user_agent');
    expect(categoryFromFunction('AI Agents')).toBe('browser_agent');
    expect(categoryFromFunction('AI Data Scrapers')).toBe('ai_training');
    for (const agent of directory.agents) {
      expect([...aiAgentCategories, 'other_bot']).toContain(agent.category);
    }
  });
});

describe('refreshing the agent directory', () => {
  const upstream = {
    ExampleBot: {
      operator: '[Example Corp](https://example.com/bot)',
      respect: '[Yes](https://example.com/bot)',
      function: 'AI Search Crawlers',
      frequency: 'Unclear at this time.',
      description: 'dropped',
    },
    MysteryAgent: {
      operator: 'Unclear at this time.',
      respect: 'Unclear at this time.',
      function: 'Scrapes [data](https://example.com/x).',
    },
    OpenTool: {
      operator: 'Anyone',
      respect: 'At the discretion of OpenTool users.',
      function: 'AI Data Scrapers',
    },
    NoBot: { operator: 'Nobody', respect: '[No](https://example.com/no)', function: 'LLM training.' },
  };

  it('reduces upstream robots.json to operator text, robots.txt respect and function text', () => {
    const reduced = reduceUpstream(upstream, { commit: 'a'.repeat(40), retrieved: '2026-11-22' });
    expect(reduced.agents).toEqual({
      ExampleBot: { operator: 'Example Corp', respects_robots_txt: 'yes', function: 'AI Search Crawlers' },
      MysteryAgent: { operator: null, respects_robots_txt: 'unclear', function: 'Scrapes data.' },
      OpenTool: { operator: 'Anyone', respects_robots_txt: 'discretion', function: 'AI Data Scrapers' },
      NoBot: { operator: 'Nobody', respects_robots_txt: 'no', function: 'LLM training.' },
    });
    expect(reduced.source).toBe(
      `https://github.com/ai-robots-txt/ai.robots.txt/blob/${'a'.repeat(40)}/robots.json`,
    );
  });

  it('npm run refresh-agents regenerates a directory the service loads, and reports what changed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'refresh-'));
    const input = join(dir, 'robots.json');
    const out = join(dir, 'ai-robots.json');
    writeFileSync(input, JSON.stringify(upstream));
    const script = new URL('../../servers/features/traffic/refresh-agents.ts', import.meta.url).pathname;
    const report = execFileSync(
      process.execPath,
      [
        '--experimental-strip-types',
        '--disable-warning=ExperimentalWarning',
        script,
        input,
        '--commit',
        'b'.repeat(40),
        '--retrieved',
        '2026-11-22',
        '--out',
        out,
      ],
      { encoding: 'utf8' },
    );
    expect(report).toMatch(/added upstream \(4\): ExampleBot, MysteryAgent, OpenTool, NoBot/);
    const refreshed = loadAgentDirectory({ upstream: pathToFileURL(out) });
    expect(refreshed.source.commit).toBe('b'.repeat(40));
    expect(refreshed.byName.get('ExampleBot')).toMatchObject({
      category: 'ai_search',
      operator: 'Example Corp',
    });
    // Our additions stay whatever upstream lists.
    expect(refreshed.byName.get('OAI-AdsBot')?.category).toBe('other_bot');
    expect(() =>
      execFileSync(
        process.execPath,
        ['--experimental-strip-types', '--disable-warning=ExperimentalWarning', script, input],
        {
          stdio: 'pipe',
        },
      ),
    ).toThrow();
  });
});
