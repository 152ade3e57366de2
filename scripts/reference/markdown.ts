/** Small helpers shared by the generated reference pages. */

/** A table cell: pipes escaped, line breaks folded (a cell is one line). */
export const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\s*\n\s*/g, ' ');

/** `value` as Markdown inline code; backticks inside use a longer fence. */
export function code(value: string): string {
  const fence = value.includes('`') ? '``' : '`';
  const pad = value.startsWith('`') || value.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${value}${pad}${fence}`;
}

export function table(header: string[], rows: string[][]): string {
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.map(cell).join(' | ')} |`),
  ].join('\n');
}

/** The generated blocks of a Markdown file: `<!-- generated:NAME -->` ... `<!-- /generated:NAME -->`. */
export function withGeneratedBlocks(text: string, blocks: Record<string, string>, file: string): string {
  let out = text;
  for (const [name, content] of Object.entries(blocks)) {
    const open = `<!-- generated:${name} -->`;
    const close = `<!-- /generated:${name} -->`;
    const pattern = new RegExp(`${open}\\n(?:[\\s\\S]*?\\n)?${close}`);
    if (!pattern.test(out)) throw new Error(`${file} has no ${open} block`);
    out = out.replace(pattern, () => `${open}\n${content}\n${close}`);
  }
  return out;
}
