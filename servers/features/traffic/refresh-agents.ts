/**
 * `npm run refresh-agents -- <robots.json path or URL> --commit <sha> [--retrieved YYYY-MM-DD] [--out <file>]`
 *
 * Regenerates `data/ai-robots.json` from ai.robots.txt's `robots.json` (see `upstream.ts` for what
 * is kept) and reports what changed, so the maintainer can read the operators' pages of new agents
 * and record their categories in `data/agent-categories.json`. The steps are in `data/NOTICE.md`.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadAgentDirectory, loadCategoryTable } from './agents.ts';
import { reduceUpstream, UpstreamRobots, VendoredFile } from './upstream.ts';

const VENDORED = new URL('./data/ai-robots.json', import.meta.url);

async function readSource(location: string): Promise<unknown> {
  if (/^https?:\/\//i.test(location)) {
    const response = await fetch(location);
    if (!response.ok) throw new Error(`${location}: HTTP ${response.status}`);
    return response.json();
  }
  return JSON.parse(readFileSync(location, 'utf8'));
}

async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { commit: { type: 'string' }, retrieved: { type: 'string' }, out: { type: 'string' } },
  });
  const [location] = positionals;
  const commit = values.commit ?? '';
  if (!location || !/^[0-9a-f]{40}$/i.test(commit)) {
    console.error(
      'usage: npm run refresh-agents -- <robots.json path or URL> --commit <40-hex upstream commit> [--retrieved YYYY-MM-DD] [--out <file>]',
    );
    process.exit(2);
  }
  const retrieved = values.retrieved ?? new Date().toISOString().slice(0, 10);
  const target = values.out ? pathToFileURL(values.out) : VENDORED;
  const upstream = UpstreamRobots.parse(await readSource(location));
  const before = VendoredFile.parse(JSON.parse(readFileSync(VENDORED, 'utf8')));
  const after = reduceUpstream(upstream, { commit: commit.toLowerCase(), retrieved });
  writeFileSync(target, `${JSON.stringify(after, null, 1)}\n`);

  const added = Object.keys(after.agents).filter((t) => !(t in before.agents));
  const removed = Object.keys(before.agents).filter((t) => !(t in after.agents));
  const upstreamNames = new Set(Object.keys(after.agents).map((t) => t.toLowerCase()));
  const table = loadCategoryTable();
  const notUpstream = Object.keys(table).filter((t) => !upstreamNames.has(t.toLowerCase()));
  const ours = notUpstream.filter((t) => table[t]?.purpose !== undefined);
  const orphans = notUpstream.filter((t) => table[t]?.purpose === undefined);
  const directory = loadAgentDirectory({ upstream: target });
  const unreviewed = directory.agents.filter((a) => a.categorySource === null).map((a) => a.name);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  out(`wrote ${target.pathname}: ${Object.keys(after.agents).length} upstream tokens at ${commit}`);
  out(`directory: ${directory.agents.length} agents after merging case and version variants`);
  out(`added upstream (${added.length}): ${added.join(', ') || '-'}`);
  out(`removed upstream (${removed.length}): ${removed.join(', ') || '-'}`);
  out(`added by agent-categories.json (${ours.length}): ${ours.join(', ') || '-'}`);
  out(
    `annotations for tokens upstream no longer lists, ignored until given a purpose or removed (${orphans.length}): ${orphans.join(', ') || '-'}`,
  );
  out(`no operator page recorded for the category (${unreviewed.length}): ${unreviewed.join(', ') || '-'}`);
  out(
    'next: update commit and date in data/NOTICE.md; check the added agents against their operators’ pages',
  );
}

await main();
