/**
 * Server-rendered pages of the authorization server: sign-in, consent, sign-out and errors. Plain
 * HTML forms that work without scripts, every control labelled, every value escaped.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { SERVICE_TITLE } from '../../servers/config.ts';
import { describeScope } from '../scopes.ts';

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const style =
  'body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#111}' +
  'label{display:block;margin-top:1rem;font-weight:600}input{width:100%;padding:.5rem;font-size:1rem;box-sizing:border-box}' +
  'button{margin-top:1.25rem;padding:.6rem 1.2rem;font-size:1rem;margin-right:.5rem}' +
  '.error{color:#a00;font-weight:600}ul{padding-left:1.25rem}code{overflow-wrap:anywhere}';

export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} - ${SERVICE_TITLE}</title>
<style>${style}</style>
</head>
<body>
<header><p id="service-name"><strong>${SERVICE_TITLE}</strong> - sign-in and access to your account</p></header>
<main>
${body}
</main>
</body>
</html>`;
}

/**
 * The name a client gave itself, and for a client named by its metadata document's URL the host of
 * that URL, which is what the name can be checked against (draft-ietf-oauth-client-id-metadata-document-02
 * has the authorization server show it during consent).
 */
function clientLabel(name: string, host: string | undefined): string {
  const named = `<span id="client-name">${escapeHtml(name)}</span>`;
  return host ? `${named} from <span id="client-host">${escapeHtml(host)}</span>` : named;
}

export interface LoginPage {
  action: string;
  csrf: string;
  clientName: string;
  /** The host of the client's ID URL, for a client named by its metadata document. */
  clientHost?: string;
  email?: string;
  error?: string;
}

export function loginPage(p: LoginPage): string {
  return page(
    'Sign in',
    `<h1>Sign in</h1>
<p><strong>${clientLabel(p.clientName, p.clientHost)}</strong> wants to connect to your ${SERVICE_TITLE} account. Sign in with the email and password of that account.</p>
${p.error ? `<p class="error" role="alert">${escapeHtml(p.error)}</p>` : ''}
<form method="post" action="${escapeHtml(p.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(p.email ?? '')}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>`,
  );
}

export interface ConsentPage {
  action: string;
  csrf: string;
  clientName: string;
  clientId: string;
  /** The host of the client's ID URL, for a client named by its metadata document. */
  clientHost?: string;
  redirectHost: string;
  scopes: string[];
  email: string;
}

export function consentPage(p: ConsentPage): string {
  const items = p.scopes
    .map(
      (s) =>
        `<li><strong>${escapeHtml(describeScope(s))}</strong> <small>(<code>${escapeHtml(s)}</code>)</small></li>`,
    )
    .join('\n');
  return page(
    `Allow ${p.clientName}?`,
    `<h1>Allow ${clientLabel(p.clientName, p.clientHost)} to access your account?</h1>
${
  p.clientHost
    ? `<p>This application is identified by a document on <strong>${escapeHtml(p.clientHost)}</strong>; its name is what that site says.</p>
`
    : ''
}<p>Signed in as <strong>${escapeHtml(p.email)}</strong>.</p>
<p>After you decide, you will be sent back to <strong id="redirect-host">${escapeHtml(p.redirectHost)}</strong>.
Client identifier: <code>${escapeHtml(p.clientId)}</code>.</p>
<h2 id="scopes-heading">It asks to</h2>
<ul aria-labelledby="scopes-heading">
${items}
</ul>
<form method="post" action="${escapeHtml(p.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(p.csrf)}">
<button type="submit" name="decision" value="approve">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p role="alert">${escapeHtml(message)}</p>`);
}

/** oidc-provider `features.rpInitiatedLogout.logoutSource`: `form` is its own, carrying its xsrf token. */
export async function logoutPage(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  ctx.type = 'html';
  ctx.body = page(
    'Sign out',
    `<h1>Sign out?</h1>
<p>Signing out ends your session and revokes the access of every application you approved in it.</p>
${form}
<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Sign out</button>
<button type="submit" form="op.logoutForm">Stay signed in</button>`,
  );
}

export async function logoutSuccessPage(ctx: KoaContextWithOIDC): Promise<void> {
  ctx.type = 'html';
  ctx.body = messagePage('Signed out', 'You are signed out.');
}

/** oidc-provider `renderError`: the OAuth error code and its description, nothing internal. */
export async function oauthErrorPage(
  ctx: KoaContextWithOIDC,
  out: { error: string; error_description?: string },
): Promise<void> {
  ctx.type = 'html';
  ctx.body = messagePage('Authorization failed', `${out.error}: ${out.error_description ?? ''}`.trim());
}
