/**
 * Signal Strength: a 0-100 score from five components (SPEC "What each SKU delivers", scan), each
 * 0-100 from weighted checks. The checks, their weights, the tiers and the no-data rule are
 * documented in docs/reference/scoring.md, whose tables `npm run docs` generates from the checks (a
 * unit test fails when they drift); the checks live one file per component in `scoring/` (the data
 * model in `scoring/model.ts`), and this file is the engine that runs them.
 *
 * No-data rule: a check that has nothing to judge (traffic without a pixel, a trend without a
 * previous scan) scores `null`, not zero. A component whose checks are all `null` reports
 * `status: "no_data"` and `score: null`; the overall score is then the weighted mean of the
 * components that have data, weights renormalized, and `note` says which were left out.
 */
import { evidenceOf, type RequestEvidence } from './evidence.ts';
import { citationSignalsChecks } from './scoring/citation-signals.ts';
import { commerceChecks } from './scoring/commerce.ts';
import { contentDepthChecks } from './scoring/content-depth.ts';
import { engagementVelocityChecks } from './scoring/engagement-velocity.ts';
import { findingsOf } from './scoring/findings.ts';
import { clamp01 } from './scoring/judging.ts';
import { liveAiTrafficChecks } from './scoring/live-ai-traffic.ts';
import { mcpEraChecks } from './scoring/mcp-era.ts';
import {
  type CheckDef,
  type CheckResult,
  type CheckStatus,
  type ComponentResult,
  components,
  type Evaluation,
  type Inputs,
  type LiveTraffic,
  type NextLevel,
  type ProfileChoice,
  type ProfileId,
  SCORING_VERSION,
  type ScoreHistory,
  type SignalScore,
  type Tier,
  tierOf,
  tiers,
} from './scoring/model.ts';
import { technicalFoundationChecks } from './scoring/technical-foundation.ts';
import { webmcpChecks } from './scoring/webmcp.ts';
import type { SiteFacts } from './site-facts.ts';

export {
  type CheckResult,
  type CheckStatus,
  type ComponentId,
  type ComponentResult,
  componentQuestions,
  components,
  type Finding,
  type LiveTraffic,
  type LiveTrafficProvider,
  type NextLevel,
  nextTools,
  type ProfileChoice,
  type ProfileId,
  SCORING_VERSION,
  type ScoreHistory,
  type Severity,
  type SignalScore,
  type Tier,
  tierMeanings,
  tierOf,
  tiers,
} from './scoring/model.ts';

/** Every check, grouped by component in docs/reference/scoring.md order. Weights within a component sum to 100. */
export const checks: readonly CheckDef[] = [
  ...technicalFoundationChecks,
  ...commerceChecks,
  ...mcpEraChecks,
  ...liveAiTrafficChecks,
  ...contentDepthChecks,
  ...citationSignalsChecks,
  ...engagementVelocityChecks,
  ...webmcpChecks,
];

/** Score trend needs the previous overall score, which depends on this scan's own score: done last. */
function scoreTrend(previous: ScoreHistory | null, current: number): Evaluation {
  if (!previous) return { score: null, seen: 'no previous scan' };
  const delta = current - previous.score;
  return {
    score: clamp01(0.5 + delta / 20),
    seen: `${previous.score} at ${previous.scanned_at}, ${current} now`,
  };
}

function componentScore(results: { weight: number; score: number | null }[]): number | null {
  const scored = results.filter((r) => r.score !== null && r.weight > 0);
  const weight = scored.reduce((n, r) => n + r.weight, 0);
  if (weight === 0) return null;
  return Math.round((100 * scored.reduce((n, r) => n + (r.score as number) * r.weight, 0)) / weight);
}

function overall(results: { name: string; weight: number; score: number | null }[]): {
  score: number;
  note: string | null;
} {
  const withData = results.filter((c) => c.score !== null);
  const weight = withData.reduce((n, c) => n + c.weight, 0);
  const score =
    weight === 0 ? 0 : Math.round(withData.reduce((n, c) => n + (c.score as number) * c.weight, 0) / weight);
  const left = results.filter((c) => c.score === null);
  const note = left.length
    ? `${left.map((c) => c.name).join(' and ')} had no data and ${left.length > 1 ? 'were' : 'was'} left out; the other components' weights were renormalized to ${weight}.`
    : null;
  return { score, note };
}

/** schema.org types that say the site sells things, and those that say it is a product with an API. */
const shopTypes = new Set(['Product', 'Offer', 'AggregateOffer', 'OnlineStore', 'Store', 'ProductGroup']);
const apiTypes = new Set(['WebAPI', 'SoftwareApplication', 'WebApplication']);

/**
 * The site's profile (docs/reference/scoring.md "Profiles"): an API or SaaS product publishes machine interfaces
 * (api-catalog, OpenAPI, OAuth, an MCP server card, an A2A card, x402) or says it is software; a
 * shop marks up products or offers, or publishes a UCP or ACP manifest; everything else is a
 * content site.
 */
export function detectProfile(facts: SiteFacts): { id: ProfileId; reasons: string[] } {
  const d = facts.discovery;
  const api = [
    d.api_catalog.valid ? 'api-catalog' : null,
    d.openapi.valid ? 'OpenAPI document' : null,
    d.oauth_protected_resource.valid ? 'OAuth protected resource metadata' : null,
    d.mcp_server_card.valid ? 'MCP server card' : null,
    d.a2a_agent_card?.valid ? 'A2A agent card' : null,
    d.x402.valid ? 'x402 document' : null,
  ].filter((r): r is string => r !== null);
  const types = new Set(facts.pages.flatMap((p) => p.json_ld_types));
  for (const t of apiTypes) if (types.has(t)) api.push(`${t} JSON-LD`);
  if (api.length) return { id: 'api', reasons: api };
  const shop = [...shopTypes].filter((t) => types.has(t)).map((t) => `${t} JSON-LD`);
  if (facts.pages.some((p) => p.open_graph['og:type'] === 'product')) shop.push('og:type product');
  // A UCP profile or an ACP discovery document says the site sells, whatever its markup.
  if (facts.commerce?.ucp.present) shop.push('UCP profile');
  if (facts.commerce?.acp.present) shop.push('ACP discovery document');
  if (shop.length) return { id: 'shop', reasons: shop };
  return { id: 'content', reasons: ['no machine interface and no product markup found'] };
}

/**
 * A site that refuses every AI search and user-triggered agent it was asked as (door_test 0) is
 * capped in Faint: whatever it publishes, those agents cannot read it (docs/reference/scoring.md "The door cap").
 */
export const DOOR_CLOSED_CAP = 49;
const doorCheck = checks.find((k) => k.id === 'door_test') as CheckDef;

export interface ScoreOptions {
  /** Score as this profile instead of the detected one. */
  profile?: ProfileId | null;
}

const MAX_EVIDENCE_PER_CHECK = 8;

/** The requests a check's judgement rests on, from the facts' evidence. */
export function evidenceOfCheck(facts: SiteFacts, checkId: string): RequestEvidence[] {
  const check = checks.find((k) => k.id === checkId);
  return check ? evidenceOf(facts.requests, check.evidence).slice(0, MAX_EVIDENCE_PER_CHECK) : [];
}

export function scoreSite(
  facts: SiteFacts,
  traffic: LiveTraffic | null,
  previous: ScoreHistory | null = null,
  options: ScoreOptions = {},
): SignalScore {
  const detected = detectProfile(facts);
  const profile: ProfileChoice = {
    id: options.profile ?? detected.id,
    detected: detected.id,
    source: options.profile && options.profile !== detected.id ? 'requested' : 'detected',
    reasons: detected.reasons,
  };
  const applies = (k: CheckDef) => !k.applies || k.applies.includes(profile.id);
  const evaluations = evaluate({ facts, traffic, previous }, profile.id, applies);
  const build = (overrides: ReadonlyMap<string, number> = new Map()) =>
    buildComponents(facts, evaluations, { applies, profile: profile.id }, overrides);

  // The score trend compares with the overall score computed without it.
  const first = overall(build());
  evaluations.set('score_trend', scoreTrend(previous, first.score));
  const result = build();
  const computed = overall(result);
  const doorClosed = applies(doorCheck) && evaluations.get('door_test')?.score === 0;
  const score = doorClosed ? Math.min(computed.score, DOOR_CLOSED_CAP) : computed.score;
  const note =
    doorClosed && computed.score > DOOR_CLOSED_CAP
      ? `${computed.note ? `${computed.note} ` : ''}AI search and user agents are refused at the door, so the score is capped at ${DOOR_CLOSED_CAP} (computed ${computed.score}).`
      : computed.note;
  const judged = checks.filter(applies).map((check) => ({
    check: informationalOn(check, profile.id)
      ? { ...check, weight: 0, informational: true, severity: 'info' as const }
      : check,
    evaluation: evaluations.get(check.id) as Evaluation,
  }));
  const { findings, tools } = findingsOf(facts, judged, traffic !== null);
  const tier = tierOf(score);
  return {
    score,
    tier,
    scoring_version: SCORING_VERSION,
    profile,
    components: result,
    note,
    findings,
    recommended_next_tools: tools,
    next_level: nextLevel(score, tier, result, build),
  };
}

/** The check is informational on this profile (`CheckDef.informationalFor`). */
const informationalOn = (k: CheckDef, profile: ProfileId): boolean => !!k.informationalFor?.includes(profile);

/** An informational check with nothing there has no value rather than a zero. */
function quietWhenAbsent(e: Evaluation): Evaluation {
  return e.score === 0 ? { ...e, score: null, status: 'no_data' } : e;
}

/** Every check's evaluation; the checks that do not fit the profile say so. */
function evaluate(
  inputs: Inputs,
  profile: ProfileId,
  applies: (k: CheckDef) => boolean,
): Map<string, Evaluation> {
  const evaluations = new Map<string, Evaluation>();
  for (const check of checks) {
    if (!applies(check)) {
      evaluations.set(check.id, {
        score: null,
        seen: `does not apply to a ${profile} site (profile ${profile})`,
      });
      continue;
    }
    const e = check.evaluate(inputs);
    evaluations.set(check.id, informationalOn(check, profile) ? quietWhenAbsent(e) : e);
  }
  return evaluations;
}

/** The components with their checks' results; `overrides` tries checks at other values (next level). */
function buildComponents(
  facts: SiteFacts,
  evaluations: ReadonlyMap<string, Evaluation>,
  { applies, profile }: { applies: (k: CheckDef) => boolean; profile: ProfileId },
  overrides: ReadonlyMap<string, number>,
): ComponentResult[] {
  const statusOf = (k: CheckDef, e: Evaluation): CheckStatus => {
    if (!applies(k)) return 'not_applicable';
    if (e.score === null) return e.status ?? 'no_data';
    return e.score >= 1 ? 'pass' : e.score <= 0 ? 'fail' : 'partial';
  };
  return components.map((c) => {
    const results = checks
      .filter((k) => k.component === c.id)
      .map((k): CheckResult => {
        const e = evaluations.get(k.id) as Evaluation;
        const score = overrides.get(k.id) ?? (e.score === null ? null : round2(e.score));
        return {
          id: k.id,
          title: k.title,
          weight: informationalOn(k, profile) ? 0 : k.weight,
          score,
          status: statusOf(k, e),
          seen: e.seen,
          evidence: evidenceOfCheck(facts, k.id),
        };
      });
    const score = componentScore(results);
    return { ...c, status: score === null ? 'no_data' : 'scored', score, checks: results };
  });
}

/**
 * The next tier up and the fewest checks that reach it: the failing checks that count, each tried
 * at full marks, largest gain first, until the overall score reaches the tier's floor.
 */
function nextLevel(
  score: number,
  tier: Tier,
  result: ComponentResult[],
  build: (overrides: ReadonlyMap<string, number>) => ComponentResult[],
): NextLevel | null {
  const index = tiers.findIndex((t) => t.id === tier.id);
  const next = index > 0 ? tiers[index - 1] : undefined;
  if (!next) return null;
  const open = result.flatMap((c) =>
    c.checks
      .filter((k) => k.score !== null && k.score < 1 && k.weight > 0 && k.id !== 'score_trend')
      .map((k) => ({ id: k.id, title: k.title, component: c.id })),
  );
  const overrides = new Map<string, number>();
  const gainOf = (id: string) => {
    const trial = new Map(overrides).set(id, 1);
    return overall(build(trial)).score - overall(build(overrides)).score;
  };
  const chosen: NextLevel['checks'] = [];
  let current = score;
  const candidates = [...open];
  while (current < next.min && candidates.length) {
    const ranked = candidates.map((c) => ({ ...c, gain: gainOf(c.id) })).sort((a, b) => b.gain - a.gain);
    const best = ranked[0] as (typeof ranked)[number];
    candidates.splice(
      candidates.findIndex((c) => c.id === best.id),
      1,
    );
    overrides.set(best.id, 1);
    current = overall(build(overrides)).score;
    chosen.push(best);
  }
  return { tier: next, points_needed: next.min - score, checks: chosen };
}

const round2 = (n: number) => Math.round(n * 100) / 100;
