/**
 * The `llms-txt` SKU (SPEC "SKUs and their inputs"): crawls a site with the scanner's crawler
 * (SSRF-safe, robots.txt obeyed, the full scan's limits) and generates its llms.txt,
 * llms-full.txt and ai.txt (`generate.ts`). Nothing is stored: the files are the answer.
 */
import { z } from 'zod';
import { ServiceError } from '../../../errors.ts';
import { defineSku } from '../../../operation.ts';
import { DomainInput } from '../../scans/schemas.ts';
import { type ExtractedPage, extractPage, generateSiteFiles, sectionOrder } from './generate.ts';

export const LlmsTxtInput = z.strictObject({ domain: DomainInput });

const GeneratedFile = z.object({
  path: z.string().describe('Where to publish it on the site'),
  url: z.string().describe('Its address once published'),
  media_type: z.string().describe('The Content-Type to serve it with'),
  content: z.string(),
  bytes: z.number().int().describe('Size of content in bytes (UTF-8)'),
});

export const LlmsTxtFiles = z.object({
  domain: z.string(),
  origin: z.string().describe('Where the crawl ran, after redirects: the files link to pages on it'),
  generated_at: z.string(),
  site_name: z
    .string()
    .describe(
      "The H1 of llms.txt: the JSON-LD Organization or WebSite name, og:site_name, or the home page's title",
    ),
  summary: z.string().describe("The > summary of llms.txt: the home page's description or first sentence"),
  files: z
    .object({
      llms_txt: GeneratedFile.describe(
        'llms.txt in the llmstxt.org format: H1, > summary, H2 sections of links',
      ),
      llms_full_txt: GeneratedFile.describe(
        "llms-full.txt: each listed page's main text as markdown, with its source URL",
      ),
      ai_txt: GeneratedFile.describe(
        "ai.txt in Spawning's convention (spawning.ai/ai-txt): AI training permissions",
      ),
    })
    .describe('The three files, ready to publish at the root of the site'),
  links: z
    .array(
      z.object({
        section: z.enum(sectionOrder),
        name: z.string(),
        url: z.string(),
        notes: z.string().nullable(),
        in_full_text: z.boolean().describe("Whether the page's text is in llms-full.txt"),
      }),
    )
    .describe('The links of llms.txt, section by section (Optional last)'),
  training_policy: z
    .object({
      training: z.enum(['allowed', 'disallowed']),
      reason: z.string().describe("The site's own statement the policy is taken from"),
    })
    .describe("What ai.txt says about AI training: what the site's robots.txt already states"),
  site_already_serves: z
    .object({ llms_txt: z.boolean(), llms_full_txt: z.boolean(), ai_txt: z.boolean() })
    .describe('Which of the files the site serves today (the generated ones would replace them)'),
  crawl: z.object({
    pages_read: z.number().int(),
    pages_left_out: z
      .number()
      .int()
      .describe(
        'Pages read but not listed: noindex, duplicates of a canonical page, sign-in and cart pages, over the caps',
      ),
    full_text_left_out: z.number().int().describe('Listed pages whose text did not fit in llms-full.txt'),
    skipped_by_robots: z.number().int().describe("Pages robots.txt keeps from this service's crawler"),
    stopped: z.enum(['max_pages', 'time_budget']).nullable().describe('Why the crawl ended early, if it did'),
  }),
});
export type LlmsTxtFiles = z.infer<typeof LlmsTxtFiles>;

const file = (origin: string, path: string, mediaType: string, content: string) => ({
  path,
  url: `${origin}${path}`,
  media_type: mediaType,
  content,
  bytes: Buffer.byteLength(content, 'utf8'),
});

export const llmsTxt = defineSku({
  name: 'generateLlmsTxt',
  title: 'Generate llms.txt, llms-full.txt and ai.txt for a site',
  description:
    "Generate llms.txt, llms-full.txt and ai.txt for a website from a crawl of its pages. The crawl obeys robots.txt and reads up to the page limit of a full scan; the three files are to publish at the site's root: llms.txt in the llmstxt.org format (the site's name as H1, a > summary, then ## sections - Docs, Products, Blog, About, Pages, Optional - of '- [title](url): description' links built from each page's title and description), llms-full.txt (each listed page's main text as markdown under its title with its source URL), and ai.txt in Spawning's ai.txt convention (spawning.ai/ai-txt), whose AI-training policy is the one the site's robots.txt already states (Content-Signal ai-train, blocked training crawlers). Returns each file's content, path and media type, the links by section, and what the site serves today. Paid per call with x402 (USDC on Base); a site whose pages cannot be read answers site_unreachable and is not charged.",
  input: LlmsTxtInput,
  output: LlmsTxtFiles,
  // Not read-only nor idempotent for the caller: every call is charged.
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  sku: { id: 'llms-txt', example: { domain: 'example.com' }, usdc: 1, unavailable: () => null },
  errors: ['validation_failed', 'site_unreachable'],
  handler: async (ctx, input) => {
    const { scans } = ctx.services;
    const domain = scans.normalize(input.domain);
    const pages: ExtractedPage[] = [];
    let unreadable = 0;
    const facts = await scans.crawl(
      domain,
      {
        onPage: ({ html, facts: page }) => {
          try {
            pages.push(extractPage(html, page));
          } catch (err) {
            unreadable++;
            ctx.log.warn({ err, url: page.url }, 'llms-txt: page text could not be extracted');
          }
        },
        ...(ctx.reportProgress
          ? {
              onProgress: (p) => {
                ctx.reportProgress?.(p.done, p.total, p.message)?.catch(() => {});
              },
            }
          : {}),
      },
      ctx.signal,
    );
    if (pages.length === 0) {
      throw new ServiceError('site_unreachable', {
        detail:
          `No HTML page of ${domain} could be read` +
          (facts.crawl.skipped_by_robots
            ? ` (${facts.crawl.skipped_by_robots} kept out by robots.txt)`
            : '') +
          (facts.crawl.errors[0] ? `: ${facts.crawl.errors[0].url} ${facts.crawl.errors[0].error}` : ''),
      });
    }
    const generated = generateSiteFiles({ origin: facts.origin, robots: facts.robots, pages });
    return {
      domain,
      origin: facts.origin,
      generated_at: ctx.services.now().toISOString(),
      site_name: generated.site_name,
      summary: generated.summary,
      files: {
        llms_txt: file(facts.origin, '/llms.txt', 'text/markdown; charset=utf-8', generated.llms_txt),
        llms_full_txt: file(
          facts.origin,
          '/llms-full.txt',
          'text/markdown; charset=utf-8',
          generated.llms_full_txt,
        ),
        ai_txt: file(facts.origin, '/ai.txt', 'text/plain; charset=utf-8', generated.ai_txt),
      },
      links: generated.links,
      training_policy: generated.training_policy,
      site_already_serves: {
        llms_txt: facts.llms_txt !== null,
        llms_full_txt: facts.llms_full_txt !== null,
        ai_txt: facts.ai_txt !== null,
      },
      crawl: {
        pages_read: pages.length + unreadable,
        pages_left_out: generated.pages_left_out + unreadable,
        full_text_left_out: generated.full_text_left_out,
        skipped_by_robots: facts.crawl.skipped_by_robots,
        stopped: facts.crawl.stopped,
      },
    };
  },
});

export const llmsTxtOperations = [llmsTxt];
