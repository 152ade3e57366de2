/**
 * An operation is defined once - data plus a handler that knows nothing about HTTP or MCP
 * (ARCHITECTURE.md section 2). The REST routes, MCP tools and OpenAPI documents are projections of
 * the registry (`registry.ts`); `invokeOperation` is the one path every adapter calls through.
 */
import type { Logger } from 'pino';
import { z } from 'zod';
import type { AccountPrincipal } from '../auth/accounts.ts';
import { type AnonymousPrincipal, invalidToken } from '../auth/anonymous/sessions.ts';
import type { OwnerGrant } from '../auth/bearer.ts';
import { bearerChallenge } from '../auth/public-api-challenge.ts';
import { type ErrorCode, invalid, ServiceError } from './errors.ts';
import { type SoulToken, soulIssuerOf } from './features/souls/keys.ts';
import { fieldErrors, nulFields } from './input.ts';
import type { OperationServices } from './operation-services.ts';
import type { ProviderStatus } from './outbound/search.ts';
import type { PaymentCredential } from './payments/credential.ts';
import type { PaymentTerms } from './payments/requirements.ts';
import { type PaidReceipt, paymentRequiredRefusal } from './payments/service.ts';
import type { SignInProof } from './payments/sign-in.ts';
import { addressProblems, type DomainPolicy } from './public-address.ts';
import { termsOf } from './sku-terms.ts';

/** Who may call an operation; the adapters enforce it before the handler runs. */
export const Access = z
  .enum(['public', 'service_key', 'bearer', 'owner', 'paid', 'soul'])
  .describe(
    'public: no authentication; service_key: x-service-key header; bearer: access token of the ' +
      'authorization server; owner: OAuth token for the owner-scoped MCP server; paid: x402 payment; ' +
      'soul: the soul API - Bearer with an access token of the authorization server (resource = the public API) or a JWT ' +
      "signed by a soul's current key, verified by the adapter; the handler checks it stands for the soul it writes.",
  );
export type Access = z.infer<typeof Access>;

/**
 * REST surfaces, each mounted at the path of its URL from the configuration: `cs` at `base_url`,
 * `public_api` at `public_api_url`, `site` at `site_url` and `functions` (the live catalog host,
 * SPEC "The catalog is also served live at {functions_url}/catalog") at `functions_url`.
 */
export const Surface = z.enum(['cs', 'public_api', 'site', 'functions']);
export type Surface = z.infer<typeof Surface>;

/** The MCP servers an operation is exposed on. */
export const McpServerName = z.enum(['public', 'owner']);
export type McpServerName = z.infer<typeof McpServerName>;

export interface HttpBinding {
  surface: Surface;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Express path relative to the surface URL, e.g. `/status`. */
  path: string;
  /** Where the input object comes from. */
  input: 'query' | 'body';
  /** Request headers the operation reads (documented in OpenAPI), e.g. `Idempotency-Key`. */
  headers?: { name: string; description: string; required?: boolean; maxLength?: number }[];
  /** Status of a successful result (default 200; 201 for creations, 202 for accepted work). */
  successStatus?: 200 | 201 | 202 | 204;
  /** Largest accepted JSON body when it is not `http.body_limit_bytes` (batch ingestion). */
  bodyLimitBytes?: number;
  /**
   * HTTP status of a successful result when it is not always the same (health answers 503 when
   * degraded; the paid scan 202 while its scan still runs). List each other status in `otherStatuses`.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the output type is the operation's
  status?: (output: any) => number;
  /** The statuses besides the success status that `status` may answer, with what each means (OpenAPI). */
  otherStatuses?: Partial<Record<200 | 202 | 503, string>>;
  /**
   * Answer `302 Found` to the URL this returns from the output instead of the JSON output (a click
   * that is counted, then redirected). The operation decides the URL; the request cannot.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the output type is the operation's
  redirect?: (output: any) => string;
  /**
   * Answer this text instead of the JSON output (a scan's fix sheet as markdown). MCP clients get
   * the structured output, which carries the same text.
   */
  // biome-ignore lint/suspicious/noExplicitAny: the output type is the operation's
  representation?: { contentType: string; body: (output: any) => string };
}

/** MCP tool annotations (MCP 2025-11-25, server/tools#tool). */
export interface Annotations {
  readOnlyHint: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The request an operation runs for, whichever adapter received it. */
export interface RequestInfo {
  id: string;
  /** Client address as Express resolves it (honours `trust_proxy`); never logged or stored raw. */
  ip: string;
  via: 'rest' | 'mcp' | 'a2a';
  headers: Record<string, string | undefined>;
}

export interface OperationContext {
  services: OperationServices;
  /**
   * The registry the adapter serves this request from: operations that describe the service
   * itself (GET /services, the catalog) project it without importing the registry.
   */
  operations: readonly AnyOperation[];
  request: RequestInfo;
  log: Logger;
  signal: AbortSignal;
  /**
   * The authenticated account: from a valid `x-service-key` (any operation; required when
   * `access` is `service_key`), or set by an adapter that authenticated the request another way.
   */
  account?: AccountPrincipal;
  /**
   * The OAuth grant an owner-scoped request runs under (client, scopes), set by the owner MCP
   * server from a verified access token; required when `access` is `owner`.
   */
  grant?: OwnerGrant;
  /**
   * The soul a soul-signed JWT stood for (`access: 'soul'`): verified (signature by its current key,
   * audience, lifetime) and its `jti` spent before the handler runs (`features/souls/service.ts`);
   * with the token and its claims, which a write keeps as its signature.
   */
  soul?: SoulToken;
  /**
   * The anonymous session (`POST {auth_url}/signup`) whose token came as `Authorization: Bearer`;
   * resolved for every operation except owner ones, which only an OAuth grant may call.
   */
  anonymous?: AnonymousPrincipal;
  /**
   * The payment a paid operation's handler runs charged to, set by `invokeOperation` once the
   * payment is verified and reserved: the handler records it beside what it writes.
   */
  payment?: PaidBy;
  /**
   * x402 sign-in-with-x: the proof the request carried (`SIGN-IN-WITH-X` header, MCP
   * `_meta["x402/sign-in-with-x"]`), which reads of paid resources check (`payments/sign-in.ts`).
   */
  signIn?: SignInProof;
  /**
   * Present when the caller asked for progress (MCP `progressToken`). Report what is observed; the
   * MCP adapter makes the values it sends strictly increasing, as MCP requires.
   */
  reportProgress?: (progress: number, total?: number, message?: string) => Promise<void>;
}

/** The verified payment a paid handler runs under: its ledger id and the paying address. */
export interface PaidBy {
  readonly id: string;
  readonly payer: string;
}

/**
 * The context an adapter builds for one call, whose `log` - the request's logger, bound to its id -
 * and, when the adapter gives a function for it, `signal` are built on first read: most calls log
 * nothing but their request line and never look at the signal. A class, not an object literal
 * with getters: V8 builds such a literal as a dictionary object on every call, which made a REST
 * lookup's CPU time per request almost twice as long (`npm run bench`).
 */
export class CallContext implements OperationContext {
  readonly services: OperationServices;
  readonly operations: readonly AnyOperation[];
  readonly request: RequestInfo;
  #signal: AbortSignal | (() => AbortSignal);
  declare account?: AccountPrincipal;
  declare grant?: OwnerGrant;
  declare soul?: SoulToken;
  declare anonymous?: AnonymousPrincipal;
  declare payment?: PaidBy;
  declare signIn?: SignInProof;
  declare reportProgress?: OperationContext['reportProgress'];
  readonly #logOf: () => Logger;
  #log: Logger | undefined;

  constructor(
    fields: Omit<OperationContext, 'log' | 'signal' | 'payment'> & {
      signal: AbortSignal | (() => AbortSignal);
    },
    logOf: () => Logger,
  ) {
    this.services = fields.services;
    this.operations = fields.operations;
    this.request = fields.request;
    this.#signal = fields.signal;
    if (fields.account) this.account = fields.account;
    if (fields.grant) this.grant = fields.grant;
    if (fields.signIn) this.signIn = fields.signIn;
    if (fields.reportProgress) this.reportProgress = fields.reportProgress;
    this.#logOf = logOf;
  }

  get log(): Logger {
    this.#log ??= this.#logOf();
    return this.#log;
  }

  get signal(): AbortSignal {
    if (typeof this.#signal === 'function') this.#signal = this.#signal();
    return this.#signal;
  }
}

/**
 * A paid SKU of the catalog (SPEC "SKUs and their inputs"). It is sold at
 * `{site_url}/api/public/x402/<id>` (POST with a JSON body, GET with query parameters) and as a tool
 * of the public MCP server; the payment core charges it in `invokeOperation`.
 */
export interface Sku<I> {
  /** The catalog's `sku`, e.g. `llms-txt`: also the last segment of its path. */
  id: string;
  /** Catalog price in USDC (`price_usdc`); the floor when the caller sets the amount. */
  usdc: number;
  /**
   * A valid input, as a buyer would send it: x402's Bazaar extension shows it in every 402 (a
   * discovery indexer checks it against the input schema) and `/.well-known/x402.json` lists it.
   */
  example: Record<string, unknown>;
  /**
   * The amount charged for this validated input, for SKUs whose amount the caller sets
   * (featured-bid: bid x days; boost: amount_usdc). Never below `usdc`. Absent: always `usdc`.
   */
  amount?: (input: I) => number;
  /**
   * Checks of the validated input against stored state, run after availability and before any
   * payment is asked for or taken (soul-write: the soul exists and is active): a 4xx, never a 402.
   */
  check?: (ctx: OperationContext, input: I) => Promise<void>;
  /**
   * Why the SKU cannot run on this deployment (not configured, not built yet), or null. Checked
   * after the input and before any payment: an unavailable SKU answers 503 `sku_unavailable`.
   */
  unavailable?: (services: OperationServices) => string | null;
  /**
   * The outside providers the SKU calls (search, language models) and whether each is configured
   * here: the live catalog lists them, so a buyer sees what an answer will be made from.
   */
  providers?: (services: OperationServices) => ProviderStatus[];
  /**
   * false for SKUs whose output is personal data (people-search): the payment ledger clears the
   * result once it is delivered, so only the receipt remains, and a replay of the same payment
   * answers `payment_already_used` instead of the stored result. Default true.
   */
  keepsResult?: boolean;
  /**
   * The SKU's own rules for this input now (a bid that cannot win, no free slot): checked after
   * availability and before any 402, and again before a new payment is verified, so nobody is asked
   * to pay for a call its rules refuse. Throws the refusal (a 409 naming what would be accepted).
   * The handler enforces the same rules again where it writes, serialised.
   */
  admit?: (services: OperationServices, input: I) => Promise<void>;
  /**
   * What the paying wallet reads again later by signing in with x402 sign-in-with-x ("the private
   * scan"): its receipt names the wallet (`payments/sign-in.ts`); its own 402 does not declare the
   * extension, since each purchase is new.
   */
  readLater?: string;
  /** The lowest amount this SKU accepts right now (the auction's minimum next bid), for the live catalog. */
  currentMinimum?: (services: OperationServices) => Promise<number>;
}

export interface OperationSpec<I extends z.ZodType, O extends z.ZodType> {
  /** operationId, camelCase; the MCP tool name is its snake_case form. */
  name: string;
  title: string;
  /** Written for a model: what it does, when to use it, what it returns. */
  description: string;
  input: I;
  output: O;
  annotations: Annotations;
  access: Access;
  http?: HttpBinding;
  mcp?: McpServerName[];
  /**
   * The paid SKU this operation sells (`access: 'paid'`, x402 in USDC on base); absent for free
   * operations. Every price the service publishes (the 402, GET /services, the catalog,
   * x402.json, OpenAPI) is read from here.
   */
  sku?: Sku<z.output<I>>;
  /** Writes without an authenticated account are limited per client address (config `rate_limits`). */
  rateLimit?: 'unauthenticated_writes';
  /** Error codes the operation itself may answer with (documented per route in OpenAPI). */
  errors?: ErrorCode[];
  tags?: string[];
  handler: (ctx: OperationContext, input: z.output<I>) => Promise<z.input<O>>;
}

export interface Operation<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType>
  extends OperationSpec<I, O> {
  toolName: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the registry holds operations of every shape
export type AnyOperation = Operation<any, any>;

/** Names of the `:param` segments of an Express path; adapters merge them into the input. */
export const pathParamsOf = (path: string): string[] =>
  [...path.matchAll(/:(\w+)/g)].map((m) => m[1] as string);

export function defineOperation<I extends z.ZodType, O extends z.ZodType>(
  spec: OperationSpec<I, O>,
): Operation<I, O> {
  return { ...spec, toolName: spec.name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) };
}

/**
 * The operation of a paid SKU: sold at `{site_url}/api/public/x402/<sku.id>` (POST with a JSON body;
 * the REST adapter answers GET with query parameters too) and as a tool of the public MCP server, as
 * the registry requires - so no SKU can be declared anywhere else or with another access.
 */
export function defineSku<I extends z.ZodType, O extends z.ZodType>(
  spec: Omit<OperationSpec<I, O>, 'access' | 'http' | 'mcp' | 'tags' | 'sku'> & {
    sku: Sku<z.output<I>>;
    /** A success status other than 200 for some outputs (the scan SKU's 202). */
    http?: Pick<HttpBinding, 'status' | 'otherStatuses'>;
  },
): Operation<I, O> {
  return defineOperation({
    ...spec,
    access: 'paid',
    http: {
      surface: 'site',
      method: 'POST',
      path: `/api/public/x402/${spec.sku.id}`,
      input: 'body',
      ...spec.http,
    },
    mcp: ['public'],
    tags: ['paid catalog'],
  });
}

/**
 * The operation's input from what an adapter received (query, body and path parameters over REST,
 * arguments over MCP). Text holding NUL is refused here, for every field of every operation, before
 * any schema or handler sees it (`input.ts`): PostgreSQL cannot store it and SQLite would. Every
 * field that holds a domain or a URL is held to the deployment's public-address rule here too
 * (`public-address.ts`), whatever the operation.
 */
export function parseInput<I extends z.ZodType>(
  op: Operation<I>,
  raw: unknown,
  policy: DomainPolicy,
): z.output<I> {
  const nul = nulFields(raw);
  if (nul.length > 0) throw invalid(nul);
  const parsed = op.input.safeParse(raw ?? {}, { reportInput: true });
  if (!parsed.success) {
    // Every problem at once: an address the rule refuses is named even when other fields fail.
    const errors = fieldErrors(parsed.error);
    const named = new Set(errors.map((e) => e.field));
    const addresses = addressProblems(op.input, raw, policy).filter((e) => !named.has(e.field));
    throw invalid([...errors, ...addresses]);
  }
  const addresses = addressProblems(op.input, parsed.data, policy);
  if (addresses.length > 0) throw invalid(addresses);
  return parsed.data;
}

/**
 * The field every paid call may carry besides its SKU's input: the referral handle the payment
 * credits (docs/guides/paid/x402.md, "Referrals"). It is taken out before the SKU's own input is validated.
 */
export const REFERRAL_FIELD = 'ref';

/** What a call answers: the output, and for a paid call the receipt the adapter sends with it. */
export interface Answer<O> {
  output: O;
  paid?: PaidReceipt;
}

/**
 * Runs an operation for an adapter that never carries a payment (pages, the direct routes, A2A, in-
 * process callers): `invokeCall` without a credential, its output.
 */
export async function invokeOperation<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
  ctx: OperationContext,
  rawInput: unknown,
): Promise<z.output<O>> {
  return (await invokeCall(op, ctx, rawInput)).output;
}

/**
 * Runs one call of an operation for any adapter - the pipeline, measured per operation, transport
 * and status (`runPipeline`). The adapter translates the payment in (`credential`: the
 * `PAYMENT-SIGNATURE` / `X-PAYMENT` header, or MCP `_meta["x402/payment"]`) and the receipt out.
 */
export async function invokeCall<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
  ctx: OperationContext,
  rawInput: unknown,
  credential?: PaymentCredential,
): Promise<Answer<z.output<O>>> {
  const metrics = ctx.services.metrics;
  if (!metrics) return runPipeline(op, ctx, rawInput, credential);
  const started = performance.now();
  try {
    const answer = await runPipeline(op, ctx, rawInput, credential);
    const status = op.http?.status?.(answer.output) ?? op.http?.successStatus ?? 200;
    metrics.observeOperation(op.name, ctx.request.via, status, started);
    return answer;
  } catch (err) {
    metrics.observeOperation(
      op.name,
      ctx.request.via,
      err instanceof ServiceError ? err.status : 500,
      started,
    );
    throw err;
  }
}

/**
 * The call, top to bottom: authenticate; parse (a paid call's referral field taken out first, as a
 * field); rate limit; for a paid SKU its own rules (`unavailable`, `check`, `admit`) and the payment
 * (`authorize` -> required | refused | replay | reserved); the handler and its output contract; the
 * settlement (`settle` -> receipt | refused). Nobody is asked to pay for a request that cannot run:
 * every check of the input comes before the 402 (`servers/payments/service.ts`).
 */
async function runPipeline<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
  ctx: OperationContext,
  rawInput: unknown,
  credential: PaymentCredential | undefined,
): Promise<Answer<z.output<O>>> {
  await authenticate(op, ctx);
  const sku = op.sku;
  const { services } = ctx;
  // A paid call without input reads its terms: the 402 at the SKU's price (x402 Bazaar indexers).
  if (sku && rawInput === undefined && credential === undefined) return quote(op, ctx);

  let ref: unknown;
  if (sku && isRecord(rawInput) && Object.hasOwn(rawInput, REFERRAL_FIELD)) {
    ({ [REFERRAL_FIELD]: ref, ...rawInput } = rawInput);
  }
  const input = parseInput(op, rawInput, services.domainPolicy);
  if (op.rateLimit && !ctx.account) await services.rateLimits.consume(op.rateLimit, ctx.request.ip);
  if (!sku) return { output: await runHandler(op, ctx, input) };
  const referral = await services.payments.referralHandle(ref);

  const terms = saleTerms(op, ctx, input);
  await sku.check?.(ctx, input);
  const admit = sku.admit && (() => (sku.admit as NonNullable<typeof sku.admit>)(services, input));

  const authorization = await services.payments.authorize(terms, credential, {
    request: input,
    referral,
    admit,
  });
  switch (authorization.outcome) {
    case 'required':
      await admit?.();
      throw paymentRequiredRefusal(terms, paymentMissing(ctx));
    case 'refused':
      throw authorization.refusal;
    case 'replay':
      return { output: authorization.output as z.output<O>, paid: withSignIn(ctx, sku, authorization.paid) };
    case 'reserved':
      break;
  }
  const { reservation } = authorization;
  ctx.payment = { id: reservation.id, payer: reservation.payer };
  let output: z.output<O>;
  try {
    output = await runHandler(op, ctx, input);
  } catch (err) {
    await services.payments.release(reservation);
    throw err;
  }
  const settlement = await services.payments.settle(reservation, output);
  if (settlement.outcome === 'refused') throw settlement.refusal;
  return { output, paid: withSignIn(ctx, sku, settlement.paid) };
}

/** A receipt of a SKU whose result is read again later: it names the wallet that may sign in (x402 sign-in-with-x). */
function withSignIn(
  ctx: OperationContext,
  sku: Pick<Sku<never>, 'readLater'>,
  paid: PaidReceipt,
): PaidReceipt {
  if (!sku.readLater) return paid;
  return { ...paid, receipt: ctx.services.signIn.receiptWithSignIn(paid.receipt, sku.readLater) };
}

/**
 * The 402 of a paid call made without input (a request with no body, or a `GET` with no query):
 * what x402's Bazaar indexers send to read a resource's terms. The terms at the SKU's floor price;
 * no input is checked, nothing is reserved. A call with input, valid or not, goes the whole way
 * (an invalid one is answered 400 before any 402).
 */
async function quote(op: AnyOperation, ctx: OperationContext): Promise<never> {
  const terms = saleTerms(op, ctx, undefined);
  const authorization = await ctx.services.payments.authorize(terms, undefined, {
    request: undefined,
    referral: null,
  });
  if (authorization.outcome === 'refused') throw authorization.refusal;
  throw paymentRequiredRefusal(terms, paymentMissing(ctx));
}

/**
 * What one call of a paid SKU is offered for (`input` undefined: its floor price), or 503
 * `sku_unavailable` with the reason when the SKU cannot be sold here now (`skuUnavailableReason`).
 */
function saleTerms(op: AnyOperation, ctx: OperationContext, input: unknown): PaymentTerms {
  const reason = skuUnavailableReason(op, ctx.services);
  const terms = reason === null ? termsOf(ctx.services.config, op, ctx.request.via, input) : null;
  if (!terms) {
    throw new ServiceError('sku_unavailable', {
      detail: `${op.sku?.id}: ${reason ?? ctx.services.payments.unavailable() ?? 'no payment terms'}`,
    });
  }
  return terms;
}

/** How the payment is sent over the caller's transport, for a 402 that has none. */
const paymentMissing = (ctx: OperationContext): string =>
  ctx.request.via === 'mcp' ? '_meta["x402/payment"] is required' : 'PAYMENT-SIGNATURE header is required';

/** A JSON object: not null, not an array. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Outputs already checked, per operation, for results their handler returned frozen: a frozen
 * result is a handler's promise that the object never changes (a cached answer served again), so
 * the output contract it passed once holds for it every time.
 */
const checkedOutputs = new WeakMap<AnyOperation, WeakMap<object, unknown>>();

/** The handler and the output contract. */
async function runHandler<I extends z.ZodType, O extends z.ZodType>(
  op: Operation<I, O>,
  ctx: OperationContext,
  input: z.output<I>,
): Promise<z.output<O>> {
  const result = await op.handler(ctx, input);
  const frozen = typeof result === 'object' && result !== null && Object.isFrozen(result) ? result : null;
  const kept = frozen ? checkedOutputs.get(op as AnyOperation) : undefined;
  if (frozen && kept?.has(frozen)) return kept.get(frozen) as z.output<O>;
  const checked = op.output.safeParse(result);
  if (!checked.success) {
    throw new ServiceError('internal_error', {
      cause: new Error(`${op.name} returned output outside its schema: ${z.prettifyError(checked.error)}`),
    });
  }
  if (frozen) {
    let outputs = kept;
    if (!outputs) {
      outputs = new WeakMap();
      checkedOutputs.set(op as AnyOperation, outputs);
    }
    // The checked copy is handed out again and again: frozen too, so adapters may keep its JSON.
    outputs.set(frozen, Object.freeze(checked.data));
  }
  return checked.data;
}

/**
 * Why the SKU an operation sells cannot run on this deployment, or null when it can (or the
 * operation sells none). The one answer `invokeOperation` (503 `sku_unavailable`) and the live
 * catalog (`available`, `unavailable_reason`) both give, so they cannot disagree.
 */
export function skuUnavailableReason(op: AnyOperation, services: OperationServices): string | null {
  if (!op.sku) return null;
  return op.sku.unavailable?.(services) ?? services.payments.unavailable();
}

export const SERVICE_KEY_HEADER = 'x-service-key';

/**
 * Resolves `ctx.account` from the `x-service-key` header. A key that is sent must be valid, even
 * where it is optional: a typo must not silently turn into an anonymous request.
 */
async function authenticate(op: AnyOperation, ctx: OperationContext): Promise<void> {
  if (!ctx.account && op.access !== 'owner') {
    const key = ctx.request.headers[SERVICE_KEY_HEADER];
    if (key !== undefined) {
      const principal = await ctx.services.accounts.authenticate(key);
      if (!principal) {
        throw new ServiceError('unauthorized', {
          detail: `The ${SERVICE_KEY_HEADER} header does not hold a valid, unrevoked service key`,
        });
      }
      ctx.account = principal;
    }
  }
  if (!ctx.grant && op.access !== 'owner') {
    const token = bearerToken(ctx.request.headers.authorization);
    const soulIssuer = op.access === 'soul' && token !== undefined ? soulIssuerOf(token) : null;
    if (token !== undefined && soulIssuer !== null) {
      // A JWT the soul signed itself (docs/guides/souls.md: iss = agent_id, aud = the soul API URL).
      const verdict = await ctx.services.souls.verifySoulToken(token, soulIssuer);
      if (!verdict.ok) {
        throw new ServiceError('invalid_token', {
          detail: verdict.description,
          headers: { 'WWW-Authenticate': bearerChallenge(ctx.services.config, 'invalid_token') },
        });
      }
      ctx.soul = verdict.token;
    } else if (token !== undefined && isJwt(token)) {
      // An access token of our authorization server for the public API (resource={public_api_url}).
      const result = await ctx.services.publicApiBearer.verify(`Bearer ${token}`, undefined);
      if (!result.ok) {
        throw new ServiceError('invalid_token', {
          detail: result.description ?? 'The access token is not valid for this API',
          headers: { 'WWW-Authenticate': bearerChallenge(ctx.services.config, 'invalid_token') },
        });
      }
      // It stands for the account on Bearer writes only: a client the owner approved must not
      // manage the account's service keys or sites (those take the key itself).
      if ((op.access === 'bearer' || op.access === 'soul') && !ctx.account)
        ctx.account = { id: result.grant.accountId, keyId: null };
    } else if (token !== undefined) {
      const session = await ctx.services.anonymous.authenticate(token);
      if (!session) throw invalidToken();
      ctx.anonymous = session;
    }
  }
  if (op.access === 'bearer' && !ctx.account) {
    throw new ServiceError('unauthorized', {
      detail:
        'Send Authorization: Bearer <access token> from the authorization server (resource = this API), ' +
        `or your service key in the ${SERVICE_KEY_HEADER} header`,
      headers: { 'WWW-Authenticate': bearerChallenge(ctx.services.config) },
    });
  }
  if (op.access === 'owner' && !(ctx.grant && ctx.account?.id === ctx.grant.accountId)) {
    throw new ServiceError('unauthorized', {
      detail: 'This tool needs an OAuth access token approved by the account owner',
    });
  }
  if (op.access === 'service_key' && !ctx.account) {
    throw new ServiceError('unauthorized', {
      detail: `Send your service key in the ${SERVICE_KEY_HEADER} header (POST /account issues one)`,
    });
  }
}

/**
 * The credential of an `Authorization: Bearer` header (RFC 6750 section 2.1; the scheme is
 * case-insensitive). Outside the owner MCP server the only bearer tokens are anonymous sessions',
 * so any other value is refused rather than ignored, as a mistyped service key is.
 */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || !/^bearer\b/i.test(header)) return undefined;
  return /^Bearer +(\S+) *$/i.exec(header)?.[1] ?? '';
}

/** A JWS compact serialization (three base64url parts): an access token, not an anonymous session's. */
const isJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token);

/** The caller's account in a handler whose operation requires one (`access: 'service_key'`). */
export function requireAccount(ctx: OperationContext): AccountPrincipal {
  if (!ctx.account) throw new ServiceError('unauthorized');
  return ctx.account;
}
