/**
 * HTTP of anonymous sessions: the sign-up at `{auth_url}/signup`, and on the site the claim pages
 * at `/register`, the agent authentication descriptor and its skill `auth.md`.
 *
 * The claim form carries a token bound to a random value the page also sets as a SameSite=Strict
 * cookie (HMAC of both with the authorization server's cookie key), and to the claim code. A form
 * posted from another site arrives without the cookie and is refused; a token copied from one
 * claim page does not work for another code.
 */
import { randomBytes } from 'node:crypto';
import express, { type Request, type RequestHandler, type Response, Router } from 'express';
import type { AccountRow } from '../../db/schema.ts';
import type { Config } from '../../servers/config.ts';
import { ServiceError, toServiceError } from '../../servers/errors.ts';
import type { RateLimits } from '../../servers/rate-limit.ts';
import { type Accounts, Email, Password } from '../accounts.ts';
import { AGENT_AUTH_PATH, agentAuthDescriptor, authSkill, SKILL_NAME } from '../descriptor.ts';
import { cookieOf, csrfMatches, csrfToken, noStore, refusedNul, sendLimitPage } from '../form-security.ts';
import { messagePage } from '../interactions/pages.ts';
import { METADATA_CACHE_CONTROL } from '../provider.ts';
import { claimedPage, claimPage } from './pages.ts';
import { type AnonymousSessions, type ClaimResult, digestOf } from './sessions.ts';

/** What the sign-up and the claim pages run on; the composition root gives it. */
export interface AnonymousRouteDeps {
  config: Config;
  rateLimits: RateLimits;
  anonymous: AnonymousSessions;
  accounts: Pick<Accounts, 'create' | 'signIn'>;
}

/** `POST {auth_url}/signup`, mounted on the authorization server's router. */
export function signupHandler(
  services: Pick<AnonymousRouteDeps, 'rateLimits' | 'anonymous'>,
): express.RequestHandler {
  return async (req, res, next) => {
    try {
      // A write anyone can make: limited per client address like the others.
      await services.rateLimits.consume('unauthenticated_writes', req.ip ?? 'unknown');
      const signup = await services.anonymous.create();
      // RFC 6749 section 5.1: token responses are not cached.
      res.status(201).set({ 'Cache-Control': 'no-store', Pragma: 'no-cache' }).json(signup);
    } catch (err) {
      next(toServiceError(err));
    }
  };
}

const CSRF_COOKIE = 'agsvc_claim';

/** Mounted at `site_url`: `/register`, the descriptor and `auth.md`. */
export function anonymousSiteRouter(services: AnonymousRouteDeps, csrfKey: string): Router {
  const { config } = services;
  const router = Router();
  const form = express.urlencoded({ extended: false, limit: '8kb' });
  const forms = claimForms(csrfKey, new URL(config.site_url).protocol === 'https:');
  const descriptor = JSON.stringify(agentAuthDescriptor(config), null, 2);
  const skill = authSkill(config);

  router.get(AGENT_AUTH_PATH, (_req, res) => {
    res
      .set({ 'Access-Control-Allow-Origin': '*', 'Cache-Control': METADATA_CACHE_CONTROL })
      .type('application/json')
      .send(descriptor);
  });
  router.get(`/${SKILL_NAME}`, (_req, res) => {
    res.set('Access-Control-Allow-Origin', '*').type('text/markdown; charset=utf-8').send(skill);
  });
  router.get('/register', async (req, res, next) => {
    try {
      if (refusedNul(res, req.query)) return;
      const code = typeof req.query.claim === 'string' ? req.query.claim : '';
      const preview = code ? await services.anonymous.preview(code) : null;
      if (!preview) {
        forms.invalidClaim(res);
        return;
      }
      forms.renderForm(req, res, code, preview.scans, 200);
    } catch (err) {
      next(err);
    }
  });
  router.post('/register', form, postClaim(services, forms));
  return router;
}

/** The claim pages, and the CSRF value of the form: a cookie nonce and the claim code, under `csrfKey`. */
function claimForms(csrfKey: string, secure: boolean) {
  const csrfContext = (nonce: string, code: string) => `claim:${nonce}:${digestOf(code)}`;
  const csrfOf = (nonce: string, code: string) => csrfToken(csrfKey, csrfContext(nonce, code));
  const csrfValid = (req: Request, code: string, sent: unknown) => {
    const nonce = cookieOf(req, CSRF_COOKIE);
    return nonce !== undefined && csrfMatches(csrfKey, csrfContext(nonce, code), sent);
  };
  const action = (req: Request) => `${req.baseUrl}/register`;
  const invalidClaim = (res: Response) =>
    noStore(res)
      .status(410)
      .type('html')
      .send(
        messagePage(
          'Claim link not valid',
          'This claim link is unknown, has expired or was used already. Ask your agent for a new one.',
        ),
      );

  /** Renders the form with a fresh CSRF value (cookie and hidden field) for this code. */
  const renderForm = (
    req: Request,
    res: Response,
    code: string,
    scans: number,
    status: number,
    error?: { message: string; email: string },
  ) => {
    const nonce = cookieOf(req, CSRF_COOKIE) ?? randomBytes(18).toString('base64url');
    res.cookie(CSRF_COOKIE, nonce, {
      httpOnly: true,
      sameSite: 'strict',
      secure,
      path: action(req),
    });
    noStore(res)
      .status(status)
      .type('html')
      .send(
        claimPage({
          action: action(req),
          csrf: csrfOf(nonce, code),
          claim: code,
          scans,
          ...(error ? { error: error.message, email: error.email } : {}),
        }),
      );
  };
  return { csrfValid, action, invalidClaim, renderForm };
}

type ClaimForms = ReturnType<typeof claimForms>;

/** The account a claim goes to, and the claim when it committed with a new account. */
interface Claimant {
  account: AccountRow;
  serviceKey?: string;
  result: ClaimResult | null;
}

/** One POST of the claim form, as far as the account it names. */
interface ClaimAttempt {
  req: Request;
  res: Response;
  code: string;
  email: string;
  password: string;
  /** Shows the form again with this status and message. */
  retry: (status: number, message: string) => void;
}

/** POST /register: the CSRF value and the rate limit checked, an account created or signed in, the session claimed. */
function postClaim(services: AnonymousRouteDeps, forms: ClaimForms): RequestHandler {
  return async (req, res, next) => {
    try {
      const body = (req.body ?? {}) as Record<string, unknown>; // no body, or not a form: every field absent
      const code = typeof body.claim === 'string' ? body.claim : '';
      if (!forms.csrfValid(req, code, body.csrf)) {
        noStore(res)
          .status(403)
          .type('html')
          .send(messagePage('Request refused', 'This form was not sent from this claim page.'));
        return;
      }
      if (refusedNul(res, body)) return;
      try {
        await services.rateLimits.consume('unauthenticated_writes', req.ip ?? 'unknown');
      } catch (err) {
        if (sendLimitPage(res, err)) return;
        throw err;
      }
      const preview = await services.anonymous.preview(code);
      if (!preview) {
        forms.invalidClaim(res);
        return;
      }
      const email = typeof body.email === 'string' ? body.email.trim() : '';
      const password = typeof body.password === 'string' ? body.password : '';
      const retry = (status: number, message: string) =>
        forms.renderForm(req, res, code, preview.scans, status, { message, email });
      const attempt: ClaimAttempt = { req, res, code, email, password, retry };
      const claimant =
        body.mode === 'create'
          ? await createAndClaim(services, forms, attempt)
          : await signInClaimant(services, attempt);
      if (!claimant) return;
      const { account, serviceKey } = claimant;
      const result = claimant.result ?? (await services.anonymous.claim(code, account.id));
      if (!result) {
        forms.invalidClaim(res);
        return;
      }
      req.log.info({ session: result.sessionId, scans: result.scans.length }, 'anonymous session claimed');
      res.clearCookie(CSRF_COOKIE, { path: forms.action(req) });
      noStore(res)
        .status(200)
        .type('html')
        .send(claimedPage({ email: account.email, result, ...(serviceKey ? { serviceKey } : {}) }));
    } catch (err) {
      next(err);
    }
  };
}

/** A new account, created with the claim in one transaction; undefined once the form is answered. */
async function createAndClaim(
  services: AnonymousRouteDeps,
  forms: ClaimForms,
  { res, code, email, password, retry }: ClaimAttempt,
): Promise<Claimant | undefined> {
  const problem = !Email.safeParse(email).success
    ? 'Enter a valid email address.'
    : !Password.safeParse(password).success
      ? 'Choose a password of 12 to 200 characters.'
      : undefined;
  if (problem) {
    retry(400, problem);
    return undefined;
  }
  try {
    // The account and the claim commit together: a code used meanwhile leaves no account behind.
    const created = await services.accounts.create({ email, password }, async (trx, made) => {
      const claimed = await services.anonymous.claimIn(trx, code, made.id);
      if (!claimed) throw new ServiceError('not_found', { detail: 'claim code used meanwhile' });
      return claimed;
    });
    return { account: created.account, serviceKey: created.key.service_key, result: created.extra };
  } catch (err) {
    if (err instanceof ServiceError && err.code === 'account_exists') {
      retry(409, 'An account with this email exists already: sign in instead.');
      return undefined;
    }
    if (err instanceof ServiceError && err.code === 'not_found') {
      forms.invalidClaim(res);
      return undefined;
    }
    if (sendLimitPage(res, err)) return undefined;
    throw err;
  }
}

/** An existing account, signed in with the form's email and password; undefined once the form is answered. */
async function signInClaimant(
  services: AnonymousRouteDeps,
  { req, res, email, password, retry }: ClaimAttempt,
): Promise<Claimant | undefined> {
  let account: AccountRow | null;
  try {
    account = email && password ? await services.accounts.signIn(email, password, req.ip ?? 'unknown') : null;
  } catch (err) {
    if (sendLimitPage(res, err)) return undefined;
    throw err;
  }
  if (!account) {
    retry(401, 'The email or password is not right.');
    return undefined;
  }
  return { account, result: null };
}
