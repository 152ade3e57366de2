/**
 * The scoring's data model: what a score is made of and from (traffic, history, checks, components,
 * tiers, profiles), and the shape of a check (`CheckDef`), which the component files under this
 * folder fill in and `../scoring.ts` runs.
 */
import type { RequestEvidence } from '../evidence.ts';
import type { SiteFacts } from '../site-facts.ts';

/**
 * Live traffic of a site that has the pixel (and server-side ingestion) installed, over the last
 * `window_days`. Supplied by the sites feature through `LiveTrafficProvider`; `null` means the site
 * has no pixel, so Live AI Traffic has no data.
 */
export interface LiveTraffic {
  window_days: number;
  /** Every recorded request or page view in the window. */
  events: number;
  /** Those made by AI agents (crawlers, AI search, user-triggered agents, browser agents). */
  ai_events: number;
  /** ai_events / events, 0..1. */
  ai_share: number;
  /** Distinct AI agents seen (product names such as `GPTBot`, `ChatGPT-User`). */
  agents_seen: string[];
  /** Human visits referred by AI assistants (chatgpt.com, perplexity.ai, claude.ai ...). */
  ai_referrals: number;
  /** The same counts over the window before, when known, for Engagement Velocity. */
  previous_ai_events: number | null;
  previous_ai_referrals: number | null;
  last_event_at: string | null;
}

export type LiveTrafficProvider = (domain: string) => Promise<LiveTraffic | null>;

/** The score of the domain's previous full scan, for Engagement Velocity. */
export interface ScoreHistory {
  score: number;
  scanned_at: string;
}

export type ComponentId =
  | 'technical_foundation'
  | 'live_ai_traffic'
  | 'content_depth'
  | 'citation_signals'
  | 'engagement_velocity';

export type Severity = 'critical' | 'warning' | 'info';

export interface Finding {
  id: string;
  component: ComponentId;
  severity: Severity;
  /** The check's title. */
  title: string;
  /** What the check is for. */
  goal: string;
  /** What was seen (the issue). */
  seen: string;
  /** How to fix it. */
  fix: string;
  /** The specification behind the check. */
  spec_url: string | null;
  /** A ready prompt for a coding agent working on the site. */
  agent_prompt: string;
  evidence_url: string | null;
  /** The requests behind the finding (up to four). */
  evidence: RequestEvidence[];
}

/**
 * pass (1), partial (between), fail (0), no_data (nothing to judge: traffic without a pixel),
 * not_applicable (the site's profile does not call for it), unable_to_check (the scan could not
 * judge it: unmeasured, or facts stored by an older scoring version).
 */
export type CheckStatus = 'pass' | 'partial' | 'fail' | 'no_data' | 'not_applicable' | 'unable_to_check';

export interface CheckResult {
  id: string;
  title: string;
  weight: number;
  /** 0..1, or null when there was nothing to judge, it does not apply, or it could not be checked. */
  score: number | null;
  status: CheckStatus;
  seen: string;
  /** The requests the judgement rests on. */
  evidence: RequestEvidence[];
}

export interface ComponentResult {
  id: ComponentId;
  name: string;
  weight: number;
  status: 'scored' | 'no_data';
  score: number | null;
  checks: CheckResult[];
}

export interface Tier {
  id: 'dark' | 'faint' | 'emerging' | 'strong' | 'beacon';
  name: string;
  min: number;
  max: number;
}

/** Site profiles (docs/reference/scoring.md "Profiles"): which checks apply. */
export type ProfileId = 'content' | 'shop' | 'api';

export interface ProfileChoice {
  id: ProfileId;
  /** The profile the scan detected from the site. */
  detected: ProfileId;
  /** detected, or requested by the caller. */
  source: 'detected' | 'requested';
  /** Why the detected profile was detected. */
  reasons: string[];
}

export interface NextLevel {
  tier: Tier;
  points_needed: number;
  /** Checks that, passed in full, would reach the tier (largest gain first). */
  checks: { id: string; title: string; component: ComponentId; gain: number }[];
}

export interface SignalScore {
  score: number;
  tier: Tier;
  scoring_version: number;
  profile: ProfileChoice;
  components: ComponentResult[];
  /** Set when components without data were left out and the weights renormalized. */
  note: string | null;
  findings: Finding[];
  recommended_next_tools: string[];
  /** The next tier and the checks that would reach it; null in the top tier. */
  next_level: NextLevel | null;
}
/**
 * Live traffic counts only for a verified owner's site whose pixel or server feed has sent events
 * (`TrafficService.liveTraffic`): a pixel on the pages of an unverified or silent site is no data.
 */
export const NO_PIXEL_DATA = 'no pixel data (no pixel, an unverified site, or no events yet)';

/** Tiers by overall score, highest first (docs/reference/scoring.md "Tiers"). */
export const tiers: readonly Tier[] = [
  { id: 'beacon', name: 'Beacon', min: 85, max: 100 },
  { id: 'strong', name: 'Strong', min: 70, max: 84 },
  { id: 'emerging', name: 'Emerging', min: 50, max: 69 },
  { id: 'faint', name: 'Faint', min: 25, max: 49 },
  { id: 'dark', name: 'Dark', min: 0, max: 24 },
];

export function tierOf(score: number): Tier {
  return tiers.find((t) => score >= t.min) ?? (tiers.at(-1) as Tier);
}

/** Component weights in the overall score (docs/reference/scoring.md "Components"). */
export const components: readonly { id: ComponentId; name: string; weight: number }[] = [
  { id: 'technical_foundation', name: 'Technical Foundation', weight: 30 },
  { id: 'live_ai_traffic', name: 'Live AI Traffic', weight: 20 },
  { id: 'content_depth', name: 'Content Depth', weight: 20 },
  { id: 'citation_signals', name: 'Citation Signals', weight: 20 },
  { id: 'engagement_velocity', name: 'Engagement Velocity', weight: 10 },
];

/** The question each component asks (docs/reference/scoring.md "Components"). */
export const componentQuestions: Readonly<Record<ComponentId, string>> = {
  technical_foundation: 'Can agents reach, read and use the site?',
  live_ai_traffic: 'Do AI agents actually visit (measured by the pixel)?',
  content_depth: 'Is there substance an agent can read?',
  citation_signals: 'Can an AI answer name and cite the site correctly?',
  engagement_velocity: 'Is AI attention growing?',
};

/** What each tier means (docs/reference/scoring.md "Tiers"). */
export const tierMeanings: Readonly<Record<Tier['id'], string>> = {
  beacon: 'agents find, read, cite and use the site',
  strong: 'ready, with a few gaps',
  emerging: 'the basics are there; discovery and citation lag',
  faint: 'agents can read some of it, with effort',
  dark: 'close to invisible to AI agents',
};

/**
 * Operations of this service a finding points to (their tool names; a test pins each to an
 * operation of the registry). `install_pixel` is POST /pixel-install, `generate_llms_txt` the
 * llms-txt SKU (llms.txt, llms-full.txt and ai.txt), `audit_entity` the entity consistency audit
 * SKU, `request_scan` a fresh scan after fixes.
 */
export const nextTools = {
  installPixel: 'install_pixel',
  llmsTxt: 'generate_llms_txt',
  entity: 'audit_entity',
  requestScan: 'request_scan',
} as const;

export interface Inputs {
  facts: SiteFacts;
  traffic: LiveTraffic | null;
  previous: ScoreHistory | null;
}

export interface Evaluation {
  score: number | null;
  seen: string;
  evidence_url?: string | null;
  /** The specification of what this evaluation found wanting, when it is not the check's own. */
  spec_url?: string;
  /** Why a null score is null, when it is not simply "no data". */
  status?: 'no_data' | 'unable_to_check';
}

export interface CheckDef {
  id: string;
  component: ComponentId;
  title: string;
  weight: number;
  severity: Severity;
  /**
   * How the score of 0..1 is reached, for people: docs/reference/scoring.md is generated from it
   * (`npm run docs`), so the rule is written here, beside the code that applies it.
   */
  rule: string;
  /** What the check is for, in one sentence. */
  goal: string;
  fix: string;
  /** The specification behind the check. */
  spec: string | null;
  /** Evidence topics the judgement rests on (`evidence.ts`). */
  evidence: readonly string[];
  /** Profiles the check applies to; every profile when absent. */
  applies?: readonly ProfileId[];
  /** Weightless and reported only when a document is there but broken (Web Bot Auth). */
  informational?: boolean;
  /**
   * Profiles on which the check is informational: weightless, no value when nothing is there,
   * and a finding only when something is there but broken (commerce on a content or API site).
   */
  informationalFor?: readonly ProfileId[];
  /** Tools that help when the check falls short. */
  tools?: string[];
  evaluate: (inputs: Inputs) => Evaluation;
}

/**
 * The scoring version stored with every scan (docs/reference/scoring.md "Versions"). Raise it with every change
 * to a check, a weight or a rule; stored scans of an older version are re-scored from their facts.
 */
export const SCORING_VERSION = 2;
