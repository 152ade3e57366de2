/**
 * llms.txt as llmstxt.org defines it: an H1 with the site or project name (the only required part),
 * an optional blockquote summary, free markdown, then H2 sections whose lists hold
 * `- [name](url): notes` links; a section named `Optional` holds links that may be skipped.
 */

export interface LlmsLink {
  name: string;
  url: string;
  notes: string | null;
}

export interface LlmsSection {
  name: string;
  optional: boolean;
  links: LlmsLink[];
}

export interface LlmsTxt {
  /** Follows the format: an H1 first, and every section item a markdown link. */
  valid: boolean;
  title: string | null;
  summary: string | null;
  sections: LlmsSection[];
  link_count: number;
  /** What departs from the format, in words. */
  problems: string[];
}

const linkItem = /^[-*+]\s+\[([^\]]+)\]\(([^)\s]+)\)(?::\s*(.*))?$/;

export function parseLlmsTxt(text: string, baseUrl?: string): LlmsTxt {
  const problems: string[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r\n|\r|\n/);
  let title: string | null = null;
  const summary: string[] = [];
  const sections: LlmsSection[] = [];
  let current: LlmsSection | null = null;
  let beforeFirstContent = true;
  let badItems = 0;

  for (const raw of lines) {
    const line = raw.trim();
    if (!line) continue;
    const h1 = /^#\s+(.+)$/.exec(line);
    const h2 = /^##\s+(.+)$/.exec(line);
    if (h1?.[1]) {
      if (title === null && beforeFirstContent) title = h1[1].trim();
      else problems.push('more than one H1, or an H1 after other content');
      beforeFirstContent = false;
      continue;
    }
    if (beforeFirstContent) {
      problems.push('the file does not start with an H1 title');
      beforeFirstContent = false;
    }
    if (h2?.[1]) {
      const name = h2[1].trim();
      current = { name, optional: name.toLowerCase() === 'optional', links: [] };
      sections.push(current);
      continue;
    }
    if (!current) {
      if (line.startsWith('>') && sections.length === 0) summary.push(line.replace(/^>\s?/, ''));
      continue;
    }
    if (/^[-*+]\s/.test(line)) {
      const match = linkItem.exec(line);
      if (!match?.[1] || !match[2]) {
        badItems++;
        continue;
      }
      current.links.push({
        name: match[1].trim(),
        url: absolute(match[2], baseUrl),
        notes: match[3]?.trim() || null,
      });
    }
  }

  if (title === null && !problems.includes('the file does not start with an H1 title'))
    problems.push('the file does not start with an H1 title');
  if (badItems > 0) problems.push(`${badItems} list item(s) in sections are not "[name](url): notes" links`);
  for (const s of sections) if (s.links.length === 0) problems.push(`section "${s.name}" lists no links`);
  const link_count = sections.reduce((n, s) => n + s.links.length, 0);
  return {
    valid: title !== null && badItems === 0 && !problems.some((p) => p.includes('H1')),
    title,
    summary: summary.length ? summary.join(' ').trim() : null,
    sections,
    link_count,
    problems,
  };
}

function absolute(url: string, base: string | undefined): string {
  try {
    return new URL(url, base).href;
  } catch {
    return url;
  }
}
