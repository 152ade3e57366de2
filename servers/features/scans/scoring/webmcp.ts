/**
 * WebMCP (Technical Foundation): the tools the home page registers for in-browser agents, read by
 * headless Chromium (`crawl/webmcp.ts`).
 *
 * Informational for every profile (no weight): the API is a Community Group draft in an origin
 * trial, and it is measured only where the deployment runs a browser (`scanner.webmcp.enabled`), so
 * a weight would make the same site score differently on two deployments. What it reports still
 * counts for the reader: registered tools whose schemas break are a finding.
 */
import type { WebMcpFacts } from '../site-facts.ts';
import { notCollected } from './judging.ts';
import type { CheckDef, Evaluation } from './model.ts';

const notMeasured: Evaluation = {
  score: null,
  status: 'unable_to_check',
  seen: 'not measured: this deployment reads pages without a browser (scanner.webmcp.enabled), or the scan was a quick check',
};

export const webmcpChecks: readonly CheckDef[] = [
  {
    id: 'webmcp',
    component: 'technical_foundation',
    title: 'WebMCP tools for in-browser agents',
    weight: 0,
    severity: 'info',
    rule: '[WebMCP](https://webmachinelearning.github.io/webmcp/) (W3C Web Machine Learning CG draft): the home page run in headless Chromium with `document.modelContext` and `navigator.modelContext` observed from before its first script (`registerTool`, `unregisterTool`, `provideContext`, `clearContext`, and `<form toolname tooldescription>`): 1 when it ends with tools that all have a valid name (1-128 of `A-Za-z0-9_.-`), a description, an `execute` function and an `inputSchema`, if any, that is a JSON Schema (2020-12) of an object; 0.5 when some tool breaks that; 0 with no tool. Not measured (unable to check) where the deployment runs no browser, or when the page neither loaded nor registered anything in its time budget. Informational (no weight): the draft is in an origin trial, and only deployments with a browser can measure it',
    goal: 'Let agents working in the browser call what the page can do as tools with typed arguments, instead of driving its interface.',
    fix: 'Register the page\'s actions with document.modelContext.registerTool({ name, description, inputSchema, execute }) (or <form toolname="..." tooldescription="...">), each inputSchema a JSON Schema of an object.',
    spec: 'https://webmachinelearning.github.io/webmcp/',
    evidence: ['webmcp'],
    informational: true,
    evaluate: ({ facts }) => {
      if (facts.webmcp === undefined) return notCollected;
      if (facts.webmcp === null) return notMeasured;
      return judgeWebMcp(facts.webmcp);
    },
  },
];

function judgeWebMcp(w: WebMcpFacts): Evaluation {
  const at = { evidence_url: w.url };
  if (w.outcome === 'failed')
    return {
      ...at,
      score: null,
      status: 'unable_to_check',
      seen: `not measured: ${w.note ?? 'the page could not be opened'}`,
    };
  if (w.tools.length === 0)
    return w.outcome === 'time_budget'
      ? {
          ...at,
          score: null,
          status: 'unable_to_check',
          seen: `not measured: ${w.note ?? 'the page did not finish loading'}`,
        }
      : { ...at, score: 0, seen: 'the home page registers no WebMCP tool' };
  const broken = w.tools.filter((t) => t.problems.length > 0);
  const names = w.tools.map((t) => t.name || '(no name)').join(', ');
  if (broken.length === 0)
    return { ...at, score: 1, seen: `${w.tools.length} tool(s) registered with valid schemas: ${names}` };
  const first = broken[0] as (typeof broken)[number];
  return {
    ...at,
    score: 0.5,
    seen: `${broken.length} of ${w.tools.length} tool(s) break the draft: ${first.name || '(no name)'}: ${first.problems.join('; ')}`,
  };
}
