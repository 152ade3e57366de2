/**
 * Findings: every applicable check below full marks, said as what it is for, what was seen, how to
 * fix it and a ready prompt for a coding agent (docs/reference/scoring.md "How a score is made", step 9), with the
 * soft-404 and no-pixel findings that are no checks.
 */
import { evidenceOf } from '../evidence.ts';
import type { SiteFacts } from '../site-facts.ts';
import {
  type CheckDef,
  type Evaluation,
  type Finding,
  NO_PIXEL_DATA,
  nextTools,
  type Severity,
} from './model.ts';

/** The findings of a score, most severe first, and the tools that help with them. */
export function findingsOf(
  facts: SiteFacts,
  judged: { check: CheckDef; evaluation: Evaluation }[],
  hasTraffic: boolean,
): { findings: Finding[]; tools: string[] } {
  const findings: Finding[] = [];
  const tools = new Set<string>();
  for (const { check, evaluation: e } of judged) {
    if (e.score === null || e.score >= 1) continue;
    if (check.informational && e.score === 0) continue;
    const severity = e.score >= 0.5 && check.severity === 'critical' ? 'warning' : check.severity;
    findings.push({
      id: check.id,
      component: check.component,
      severity,
      title: check.title,
      goal: check.goal,
      seen: e.seen,
      fix: check.fix,
      spec_url: e.spec_url ?? check.spec,
      agent_prompt: agentPrompt(
        facts.origin,
        check.title,
        check.goal,
        e.seen,
        check.fix,
        e.spec_url ?? check.spec,
        e.evidence_url ?? null,
      ),
      evidence_url: e.evidence_url ?? null,
      evidence: evidenceOf(facts.requests, check.evidence).slice(0, 4),
    });
    for (const tool of check.tools ?? []) tools.add(tool);
  }
  const softNotFound = softNotFoundFinding(facts);
  if (softNotFound) findings.push(softNotFound);
  const order: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };
  findings.sort((a, b) => order[a.severity] - order[b.severity]);
  if (!hasTraffic) {
    findings.push(noPixelFinding(facts));
    tools.add(nextTools.installPixel);
  }
  if (findings.some((f) => f.severity !== 'info')) tools.add(nextTools.requestScan);
  return { findings, tools: [...tools] };
}

function noPixelFinding(facts: SiteFacts): Finding {
  const title = 'Live AI traffic is measured';
  const goal = 'Measure the AI agents that actually visit, not only whether they could.';
  const seen = `${NO_PIXEL_DATA}: Live AI Traffic has no data and is left out of the score`;
  const fix = 'Install the pixel (POST /pixel-install) and forward server logs to measure AI agent visits.';
  return {
    id: 'no_pixel',
    component: 'live_ai_traffic',
    severity: 'info',
    title,
    goal,
    seen,
    fix,
    spec_url: null,
    agent_prompt: agentPrompt(facts.origin, title, goal, seen, fix, null, null),
    evidence_url: null,
    evidence: [],
  };
}

/** A ready prompt for a coding agent that works on the site (issue 16 section 3). */
function agentPrompt(
  origin: string,
  title: string,
  goal: string,
  seen: string,
  fix: string,
  spec: string | null,
  url: string | null,
): string {
  return [
    `You are working on the code and configuration that serve ${origin}.`,
    `An agent-readiness scan found a problem: "${title}".`,
    `Goal: ${goal}`,
    `What the scan saw: ${seen}.`,
    `What to do: ${fix}`,
    spec ? `Specification: ${spec}` : null,
    `Find where this is produced (web server, CDN, framework routes or static files), make the change, and check it by requesting ${url ?? `${origin}/`} as the scan did. Change nothing else.`,
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Not a check (it has no weight): the documents that answered like a made-up path already earned
 * nothing. It says why, and that agents probing the site are misled the same way.
 */
function softNotFoundFinding(facts: SiteFacts): Finding | null {
  const probe = facts.unknown_path;
  if (!probe?.soft_404) return null;
  const same = probe.same_answer.map((u) => new URL(u).pathname);
  const title = 'Unknown paths answer 404';
  const goal =
    'Answer paths that do not exist with 404, so agents can tell a missing document from a real one.';
  const seen = `a made-up path answered HTTP ${probe.status} ${probe.media_type ?? 'without a content type'} instead of 404${same.length ? `; ${same.join(', ')} gave the same answer and earned no credit` : ''}`;
  const fix =
    'Answer paths that do not exist with 404 (RFC 9110 section 15.5.5), above all under /.well-known/: serve the app shell only for the routes the app has, and publish real documents at the paths agents look for.';
  const spec = 'https://www.rfc-editor.org/rfc/rfc9110#section-15.5.5';
  return {
    id: 'soft_404',
    component: 'technical_foundation',
    severity: 'warning',
    title,
    goal,
    seen,
    fix,
    spec_url: spec,
    agent_prompt: agentPrompt(facts.origin, title, goal, seen, fix, spec, probe.url),
    evidence_url: probe.url,
    evidence: evidenceOf(facts.requests, ['unknown_path']).slice(0, 4),
  };
}
