/**
 * Every relative link in README.md and docs/ resolves: the file exists, and a `#anchor` is the slug
 * (as GitHub makes it, github-slugger) of a heading in the target.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import GithubSlugger from 'github-slugger';
import { describe, expect, it } from 'vitest';
import { projectRoot } from '../../servers/config.ts';

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(full);
    return entry.name.endsWith('.md') ? [full] : [];
  });
}

/** The text outside fenced code blocks, where links and headings live. */
function prose(text: string): string[] {
  let fenced = false;
  return text.split('\n').filter((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return false;
    }
    return !fenced;
  });
}

/** A heading's text as GitHub renders it before making the slug: links by their text, code unquoted. */
const rendered = (heading: string): string =>
  heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/`/g, '')
    .trim();

function anchorsOf(file: string): Set<string> {
  const slugger = new GithubSlugger();
  const anchors = new Set<string>();
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6} (.+)$/.exec(line);
    if (heading) anchors.add(slugger.slug(rendered(heading[1] as string)));
  }
  return anchors;
}

function linksOf(file: string): string[] {
  const links: string[] = [];
  for (const line of prose(readFileSync(file, 'utf8'))) {
    const text = line.replace(/`[^`]*`/g, '');
    for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push(m[1] as string);
  }
  return links;
}

const files = [path.join(projectRoot, 'README.md'), ...markdownFiles(path.join(projectRoot, 'docs'))];

describe('documentation links', () => {
  it('finds the pages', () => {
    expect(files.length).toBeGreaterThan(20);
  });

  for (const file of files) {
    it(`every relative link of ${path.relative(projectRoot, file)} resolves`, () => {
      const broken: string[] = [];
      for (const link of linksOf(file)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue;
        const [target = '', anchor] = link.split('#');
        const resolved = target ? path.resolve(path.dirname(file), decodeURIComponent(target)) : file;
        if (!existsSync(resolved)) {
          broken.push(`${link}: no such file`);
          continue;
        }
        if (anchor === undefined) continue;
        if (statSync(resolved).isDirectory() || !resolved.endsWith('.md')) {
          broken.push(`${link}: an anchor into a file that is not Markdown`);
        } else if (!anchorsOf(resolved).has(anchor)) {
          broken.push(`${link}: no heading with that anchor`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
