/**
 * The agent-versus-human classifier against real user-agent strings, as their operators document
 * them or as they appear in server logs.
 */
import { describe, expect, it } from 'vitest';
import {
  aiAgentCategories,
  categoryFromFunction,
  loadAgentDirectory,
} from '../../servers/features/traffic/agents.ts';
import { aiReferrer, Classifier, parseSignatureAgent } from '../../servers/features/traffic/classify.ts';

const directory = loadAgentDirectory();
const classifier = new Classifier(directory);

const chrome =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const table: [string, string, string | null, string | null][] = [
  // People.
  [chrome, 'human', null, null],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
    'human',
    null,
    null,
  ],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 'human', null, null],
  [
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
    'human',
    null,
    null,
  ],
  [
    'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.81 Mobile Safari/537.36',
    'human',
    null,
    null,
  ],
  [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
    'human',
    null,
    null,
  ],
  // Fetches an assistant makes for a user now.
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
    'ai_user_agent',
    'ChatGPT-User',
    'OpenAI',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
    'ai_user_agent',
    'Claude-User',
    'Anthropic',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
    'ai_user_agent',
    'Perplexity-User',
    'Perplexity',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; MistralAI-User/1.0; +https://docs.mistral.ai/robots)',
    'ai_user_agent',
    'MistralAI-User',
    'Mistral AI',
  ],
  // AI search indexes.
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; OAI-SearchBot/1.0; +https://openai.com/searchbot',
    'ai_search',
    'OAI-SearchBot',
    'OpenAI',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-SearchBot/1.0; +Claude-SearchBot@anthropic.com)',
    'ai_search',
    'Claude-SearchBot',
    'Anthropic',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; PerplexityBot/1.0; +https://perplexity.ai/perplexitybot)',
    'ai_search',
    'PerplexityBot',
    'Perplexity',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Amazonbot/0.1; +https://developer.amazon.com/support/amazonbot) Chrome/119.0.6045.214 Safari/537.36',
    'ai_search',
    'Amazonbot',
    'Amazon',
  ],
  [
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/13.1.1 Safari/605.1.15 (Applebot/0.1; +http://www.apple.com/go/applebot)',
    'ai_search',
    'Applebot',
    'Apple',
  ],
  [
    'DuckAssistBot/1.2; (+http://duckduckgo.com/duckassistbot.html)',
    'ai_search',
    'DuckAssistBot',
    'DuckDuckGo',
  ],
  // Training crawlers.
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.1; +https://openai.com/gptbot)',
    'ai_training',
    'GPTBot',
    'OpenAI',
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ClaudeBot/1.0; +claudebot@anthropic.com)',
    'ai_training',
    'ClaudeBot',
    'Anthropic',
  ],
  ['CCBot/2.0 (https://commoncrawl.org/faq/)', 'ai_training', 'CCBot', 'Common Crawl Foundation'],
  [
    'Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider; spider-feedback@bytedance.com)',
    'ai_training',
    'Bytespider',
    'ByteDance',
  ],
  [
    'meta-externalagent/1.1 (+https://developers.facebook.com/docs/sharing/webmasters/crawler)',
    'ai_training',
    'meta-externalagent',
    'Meta',
  ],
  [
    'Mozilla/5.0 (compatible; Google-CloudVertexBot; +https://cloud.google.com/enterprise-search)',
    'ai_training',
    'Google-CloudVertexBot',
    'Google',
  ],
  // Other bots.
  [
    'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
    'other_bot',
    'Googlebot',
    null,
  ],
  [
    'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/131.0.6778.69 Safari/537.36',
    'other_bot',
    'Googlebot',
    null,
  ],
  ['Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)', 'other_bot', 'bingbot', null],
  ['Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)', 'other_bot', 'YandexBot', null],
  ['curl/8.4.0', 'other_bot', 'curl', null],
  ['python-requests/2.31.0', 'other_bot', 'python-requests', null],
  ['Wget/1.21.4', 'other_bot', 'Wget', null],
  [
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36',
    'other_bot',
    'HeadlessChrome',
    null,
  ],
  [
    'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
    'other_bot',
    'facebookexternalhit',
    'Meta',
  ],
  ['', 'other_bot', null, null],
];

describe('classifier on real user-agent strings', () => {
  it.each(table)('%s -> %s', (userAgent, category, agent, operator) => {
    expect(classifier.classify({ userAgent })).toEqual({ category, agent, operator });
  });

  it('gives the same verdict from its cache', () => {
    const ua = table[6]?.[0] as string;
    expect(classifier.classify({ userAgent: ua })).toEqual(classifier.classify({ userAgent: ua }));
  });

  it('does not let a generic robots token claim an unrelated crawler', () => {
    // `Spider` and `Code` are robots.txt tokens upstream; Baiduspider is a search engine.
    const baidu = 'Mozilla/5.0 (compatible; Baiduspider/2.0; +http://www.baidu.com/search/spider.html)';
    expect(classifier.classify({ userAgent: baidu })).toMatchObject({
      category: 'other_bot',
      agent: 'Baiduspider',
    });
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
    expect(directory.agents.length).toBeGreaterThan(140);
    expect(directory.byName.get('GPTBot')).toMatchObject({
      operator: 'OpenAI',
      category: 'ai_training',
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
    expect(directory.source).toMatchObject({ name: 'ai.robots.txt', license: 'MIT' });
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
