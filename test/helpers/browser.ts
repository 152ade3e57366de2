/**
 * Headless Chromium for page tests (Debian's `chromium` driven by playwright-core) and the axe-core
 * audit every page must pass: no serious or critical violation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, chromium, type Page } from 'playwright-core';

export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Browser tests run where Chromium is installed, and always under CI (where its absence fails). */
export const browserAvailable = existsSync(chromiumPath) || process.env.CI === 'true';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations of the page now open, each as `label: rule [targets]`.
 * axe is injected as a script, which the pages' own CSP refuses: run it in a page opened with
 * `bypassCSP`.
 */
export async function seriousAxeViolations(page: Page, label: string): Promise<string[]> {
  await page.addScriptTag({ content: axeSource });
  const violations = (await page.evaluate(
    'axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)',
  )) as Array<{ id: string; impact: string; nodes: Array<{ target: unknown }> }>;
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${label}: ${v.id} ${JSON.stringify(v.nodes.slice(0, 3).map((n) => n.target))}`);
}
