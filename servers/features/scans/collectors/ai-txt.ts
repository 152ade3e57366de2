/**
 * ai.txt (Spawning, spawning.ai/ai-txt): robots.txt-like groups of `User-Agent` with `Allow` and
 * `Disallow` lines whose patterns are file types or paths (`*.jpg`, `/images/`), saying which media
 * may be used to train AI models.
 */

export interface AiTxtGroup {
  user_agents: string[];
  allow: string[];
  disallow: string[];
}

export interface AiTxt {
  groups: AiTxtGroup[];
  /** Some group for `*` disallows everything (`Disallow: /` or `Disallow: *`). */
  disallows_all: boolean;
  /** Number of lines that were neither a field nor a comment. */
  unknown_lines: number;
}

export function parseAiTxt(text: string): AiTxt {
  const groups: AiTxtGroup[] = [];
  let current: AiTxtGroup | null = null;
  let unknown = 0;
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    if (!line) continue;
    const match = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!match?.[1]) {
      unknown++;
      continue;
    }
    const field = match[1].toLowerCase();
    const value = (match[2] ?? '').trim();
    if (field === 'user-agent') {
      if (!current || current.allow.length + current.disallow.length > 0) {
        current = { user_agents: [], allow: [], disallow: [] };
        groups.push(current);
      }
      current.user_agents.push(value);
    } else if (field === 'allow' || field === 'disallow') {
      if (!current) {
        current = { user_agents: ['*'], allow: [], disallow: [] };
        groups.push(current);
      }
      if (value) current[field].push(value);
    } else {
      unknown++;
    }
  }
  const disallows_all = groups.some(
    (g) => g.user_agents.includes('*') && g.disallow.some((d) => d === '/' || d === '*' || d === '/*'),
  );
  return { groups, disallows_all, unknown_lines: unknown };
}
