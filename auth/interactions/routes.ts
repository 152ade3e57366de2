/**
 * The login and consent steps of an authorization request (oidc-provider "interactions"). Each
 * form carries a token bound to the interaction (HMAC of its uid with the cookie key), and the
 * interaction itself is only readable with oidc-provider's SameSite cookie, so a form posted from
 * another site is refused.
 */
import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type Provider from 'oidc-provider';
import type { InteractionResults } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { AccountRow } from '../../db/schema.ts';
import type { Accounts } from '../accounts.ts';
import { clientIdHost } from '../client-id-metadata.ts';
import { csrfMatches, csrfToken, noStore, refusedNul, sendLimitPage } from '../form-security.ts';
import { scopeDescriptions } from '../scopes.ts';
import { consentPage, loginPage, messagePage } from './pages.ts';

/** What the sign-in and consent pages read: the accounts. */
export interface InteractionDeps {
  accounts: Pick<Accounts, 'get' | 'signIn'>;
}

export function interactionRouter(services: InteractionDeps, provider: Provider, csrfKey: string): Router {
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  const pages: InteractionPages = {
    services,
    provider,
    csrfOf: (uid) => csrfToken(csrfKey, `interaction:${uid}`),
    csrfValid: (uid, sent) => csrfMatches(csrfKey, `interaction:${uid}`, sent),
  };
  router.get('/:uid', (req, res, next) => {
    render(pages, req, res).catch(next);
  });
  router.post('/:uid/login', form, postLogin(pages));
  router.post('/:uid/confirm', form, postConsent(pages));
  return router;
}

/** What the interaction pages share: the accounts, the provider, and the forms' CSRF token bound to the interaction. */
interface InteractionPages {
  services: InteractionDeps;
  provider: Provider;
  csrfOf: (uid: string) => string;
  csrfValid: (uid: string, sent: unknown) => boolean;
}

/** The interaction of this browser, or undefined once an expired-request page is sent. */
async function details(provider: Provider, req: Request, res: Response) {
  try {
    return await provider.interactionDetails(req, res);
  } catch {
    noStore(res)
      .status(400)
      .type('html')
      .send(
        messagePage(
          'Sign-in expired',
          'This sign-in request has expired or was opened in another browser. Start again from your application.',
        ),
      );
    return undefined;
  }
}

type ClientSummary = Awaited<ReturnType<typeof clientOf>>;

async function clientOf(provider: Provider, clientId: string) {
  const client = await provider.Client.find(clientId);
  return {
    name: (client?.clientName as string | undefined) ?? clientId,
    // A client named by its metadata document's URL chose its own name: its host is what is known.
    host: clientIdHost(clientId),
    refreshes: client?.grantTypeAllowed('refresh_token') ?? false,
  };
}

/** The page of the interaction's prompt: sign-in (again, with `error`) or consent. */
async function render(
  pages: InteractionPages,
  req: Request,
  res: Response,
  error?: { message: string; email: string },
) {
  const interaction = await details(pages.provider, req, res);
  if (!interaction) return;
  const { uid, prompt, params, session } = interaction;
  const clientId = String(params.client_id);
  let client: ClientSummary;
  try {
    client = await clientOf(pages.provider, clientId);
  } catch (err) {
    // A client ID metadata document that stopped being usable since the request began.
    if (!(err instanceof errors.OIDCProviderError) || !err.expose) throw err;
    noStore(res)
      .status(err.status)
      .type('html')
      .send(messagePage('Authorization failed', `${err.error}: ${err.error_description ?? ''}`));
    return;
  }
  noStore(res).type('html');
  if (prompt.name === 'login') {
    res.status(error ? 401 : 200).send(
      loginPage({
        action: `${req.baseUrl}/${uid}/login`,
        csrf: pages.csrfOf(uid),
        clientName: client.name,
        ...(client.host ? { clientHost: client.host } : {}),
        ...(error ? { error: error.message, email: error.email } : {}),
      }),
    );
    return;
  }
  const account = session?.accountId ? await pages.services.accounts.get(session.accountId) : undefined;
  res.send(
    consentPage({
      action: `${req.baseUrl}/${uid}/confirm`,
      csrf: pages.csrfOf(uid),
      clientName: client.name,
      clientId,
      ...(client.host ? { clientHost: client.host } : {}),
      redirectHost: new URL(String(params.redirect_uri)).host,
      scopes: consentScopes(String(params.scope ?? ''), client),
      email: account?.email ?? '',
    }),
  );
}

/** The scopes the consent page names. */
function consentScopes(requested: string, client: ClientSummary): string[] {
  // Every scope the client asks for is named, also those approved before: RFC 8252 section 8.6
  // has native clients asked each time, and the person decides on the whole request.
  const scopes = requested.split(' ').filter((scope) => scope && scopeDescriptions[scope] !== undefined);
  // oidc-provider drops offline_access from the request, but every client allowed the
  // refresh_token grant gets a refresh token (`provider.ts`, issueRefreshToken): say so.
  if (client.refreshes && !scopes.includes('offline_access')) scopes.push('offline_access');
  return scopes;
}

/** POST /:uid/login: the sign-in form; the interaction finishes with the account, or the form comes back. */
function postLogin(pages: InteractionPages): RequestHandler {
  const { services, provider } = pages;
  return async (req, res, next) => {
    try {
      const interaction = await details(provider, req, res);
      if (!interaction) return;
      const body = (req.body ?? {}) as Record<string, unknown>; // no body, or not a form: every field absent
      if (interaction.prompt.name !== 'login' || !pages.csrfValid(interaction.uid, body.csrf)) {
        noStore(res)
          .status(403)
          .type('html')
          .send(messagePage('Request refused', 'This form was not sent from this sign-in page.'));
        return;
      }
      if (refusedNul(res, body)) return;
      const email = typeof body.email === 'string' ? body.email.trim() : '';
      const password = typeof body.password === 'string' ? body.password : '';
      let account: AccountRow | null = null;
      try {
        if (email && password) account = await services.accounts.signIn(email, password, req.ip ?? 'unknown');
      } catch (err) {
        if (sendLimitPage(res, err)) return;
        throw err;
      }
      if (!account) {
        await render(pages, req, res, { message: 'The email or password is not right.', email });
        return;
      }
      const result: InteractionResults = { login: { accountId: account.id } };
      await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    } catch (err) {
      next(err);
    }
  };
}

/** POST /:uid/confirm: the consent form; approved, the grant gains what the prompt found missing. */
function postConsent(pages: InteractionPages): RequestHandler {
  const { provider } = pages;
  return async (req, res, next) => {
    try {
      const interaction = await details(provider, req, res);
      if (!interaction) return;
      const body = (req.body ?? {}) as Record<string, unknown>; // no body, or not a form: every field absent
      if (interaction.prompt.name !== 'consent' || !pages.csrfValid(interaction.uid, body.csrf)) {
        noStore(res)
          .status(403)
          .type('html')
          .send(messagePage('Request refused', 'This form was not sent from this consent page.'));
        return;
      }
      if (refusedNul(res, body)) return;
      if (body.decision !== 'approve') {
        await provider.interactionFinished(
          req,
          res,
          { error: 'access_denied', error_description: 'The account owner denied the request' },
          { mergeWithLastSubmission: false },
        );
        return;
      }
      const consent = { grantId: await grantWithConsent(provider, interaction) };
      await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
    } catch (err) {
      next(err);
    }
  };
}

/** The interaction's grant (found, or new) with the scopes, claims and resource scopes the prompt found missing; its id. */
async function grantWithConsent(
  provider: Provider,
  interaction: Awaited<ReturnType<Provider['interactionDetails']>>,
): Promise<string> {
  const { prompt, params, session, grantId } = interaction;
  const accountId = session?.accountId as string;
  const grant =
    (grantId ? await provider.Grant.find(grantId) : undefined) ??
    new provider.Grant({ accountId, clientId: String(params.client_id) });
  const missing = prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return grant.save();
}
