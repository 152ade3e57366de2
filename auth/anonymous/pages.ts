/**
 * The claim pages at `{site_url}/register`, in the look of the authorization server's pages: a
 * plain form that works without scripts, every control labelled, every value escaped.
 */
import { escapeHtml, page } from '../interactions/pages.ts';
import type { ClaimResult } from './sessions.ts';

export interface ClaimPage {
  action: string;
  csrf: string;
  claim: string;
  scans: number;
  email?: string;
  error?: string;
}

export function claimPage(p: ClaimPage): string {
  const what = p.scans === 1 ? '1 scan' : `${p.scans} scans`;
  return page(
    'Keep your agent\u2019s results',
    `<h1>Keep your agent\u2019s results</h1>
<p>An agent worked for you without an account. Its session holds <strong id="scan-count">${escapeHtml(what)}</strong>.
Sign in, or create an account, and they move to your account.</p>
${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ''}
<form method="post" action="${escapeHtml(p.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<input type="hidden" name="claim" value="${escapeHtml(p.claim)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(p.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required minlength="12">
<button type="submit" name="mode" value="signin">Sign in and claim</button>
<button type="submit" name="mode" value="create">Create account and claim</button>
</form>
<p><small>A new account needs a password of at least 12 characters.</small></p>`,
  );
}

export interface ClaimedPage {
  email: string;
  result: ClaimResult;
  /** The first service key of an account made here: shown once, as `POST /account` does. */
  serviceKey?: string;
}

export function claimedPage(p: ClaimedPage): string {
  const items = p.result.scans
    .map(
      (s) =>
        `<li><strong>${escapeHtml(s.domain)}</strong> (${s.public ? 'public' : 'private'}) <small><code>${escapeHtml(s.scan_id)}</code></small></li>`,
    )
    .join('\n');
  const moved = p.result.scans.length;
  return page(
    'Claimed',
    `<h1>Claimed</h1>
<p role="status"><span id="moved-count">${moved}</span> ${moved === 1 ? 'scan' : 'scans'} moved to <strong>${escapeHtml(p.email)}</strong>.
The agent\u2019s anonymous token no longer works; use your account from now on.</p>
${moved ? `<ul id="moved-scans">\n${items}\n</ul>` : ''}
${
  p.serviceKey
    ? `<h2>Your service key</h2>
<p>Shown once. Send it as the <code>x-service-key</code> header to read your private scans.</p>
<p><code id="service-key">${escapeHtml(p.serviceKey)}</code></p>`
    : ''
}`,
  );
}
