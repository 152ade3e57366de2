/** docs/reference/scoring.md: the components, checks and tiers of Signal Strength from its only implementation. */
import {
  checks,
  componentQuestions,
  components,
  tierMeanings,
  tiers,
} from '../../servers/features/scans/scoring.ts';
import { code, table } from './markdown.ts';

export function scoringBlocks(): Record<string, string> {
  const blocks: Record<string, string> = {
    'scoring-components': table(
      ['component', 'weight', 'what it asks'],
      components.map((c) => [c.name, String(c.weight), componentQuestions[c.id]]),
    ),
    'scoring-tiers': table(
      ['tier', 'score', 'meaning'],
      tiers.map((t) => [t.name, `${t.min}-${t.max}`, tierMeanings[t.id]]),
    ),
  };
  for (const c of components) {
    blocks[`scoring-checks-${c.id.replaceAll('_', '-')}`] = table(
      ['check', 'weight', 'severity', 'rule'],
      checks
        .filter((k) => k.component === c.id)
        .map((k) => [
          code(k.id),
          String(k.weight),
          k.severity,
          k.rule + profilesNote(k.applies) + informationalNote(k.informationalFor),
        ]),
    );
  }
  return blocks;
}

function profilesNote(applies: readonly string[] | undefined): string {
  if (!applies) return '';
  const names = applies.map(code);
  return names.length === 1
    ? `. Profile ${names[0]} only`
    : `. Profiles ${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function informationalNote(profiles: readonly string[] | undefined): string {
  if (!profiles?.length) return '';
  const names = profiles.map(code);
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
  return `. Informational (no weight) on ${list} sites`;
}
