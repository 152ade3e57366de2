/**
 * OpenAPI 3.1.0 documents generated from the registry, one per REST surface. The JSON Schemas
 * come from the same zod schemas (and the same conversion) as the MCP tools' input and output
 * schemas, so the two cannot drift.
 */
import { stringify } from 'yaml';
import { type Config, serviceVersion } from '../config.ts';
import { errorCodes } from '../errors.ts';
import { type JsonSchema, jsonSchemaOf } from '../json-schema.ts';
import {
  type AnyOperation,
  type HttpBinding,
  pathParamsOf,
  REFERRAL_FIELD,
  SERVICE_KEY_HEADER,
  Surface,
} from '../operation.ts';
import { networkOf } from '../payments/networks.ts';
import { PaymentProblem, PROBLEM_CONTENT_TYPE, Problem } from './problem.ts';

export const surfaceInfo: Record<Surface, { title: string; version: string; description: string }> = {
  cs: {
    title: 'Customer service agent',
    version: '1.0.0',
    description:
      'Keyless tools for personal agents: find which brand is behind a card charge, start a return or refund ' +
      "request with that brand, and read the request's status. No authentication. Errors are RFC 9457 " +
      'problem details with a stable `code`. Unauthenticated writes are rate limited per client address ' +
      '(429 with Retry-After). The same operations are tools of the public MCP server.',
  },
  public_api: {
    title: 'Public API',
    version: serviceVersion,
    description: 'Free read endpoints about the agent-readiness of websites and agent identity.',
  },
  site: {
    title: 'Site',
    version: serviceVersion,
    description:
      'Discovery documents, the agent identity API and the paid SKUs of the catalog ' +
      '(`/api/public/x402/<sku>`, paid in USDC on base with x402).',
  },
  functions: {
    title: 'Live catalog',
    version: serviceVersion,
    description:
      'The paid SKU catalog as this deployment serves it now: the snapshot of GET {public_api_url}/catalog ' +
      'with the time of the request and, per SKU, whether it can be bought here.',
  },
};

export function surfaceUrl(config: Config, surface: Surface): string {
  switch (surface) {
    case 'cs':
      return config.base_url;
    case 'public_api':
      return config.public_api_url;
    case 'site':
      return config.site_url;
    case 'functions':
      return config.functions_url;
  }
}

/** Express `/a/:id` -> OpenAPI `/a/{id}`. */
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

export function openApiDocument(
  surface: Surface,
  operations: readonly AnyOperation[],
  config: Config,
): JsonSchema {
  const info = surfaceInfo[surface];
  const paths: Record<string, Record<string, unknown>> = {};
  const usedCodes = new Set<string>(['internal_error']);

  for (const op of operations) {
    const declared = op.http;
    if (!declared || declared.surface !== surface) continue;
    // A SKU is sold over POST with a JSON body and over GET with query parameters (issue 9).
    const bindings: [HttpBinding, string][] = [[declared, op.name]];
    if (op.sku && declared.method !== 'GET') {
      bindings.push([{ ...declared, method: 'GET', input: 'query' }, `${op.name}${PAID_GET_SUFFIX}`]);
    }
    for (const [http, operationId] of bindings) {
      const path = openApiPath(http.path);
      paths[path] ??= {};
      (paths[path] as Record<string, unknown>)[http.method.toLowerCase()] = operationEntry(
        op,
        http,
        operationId,
        config,
        usedCodes,
      );
    }
  }

  return {
    openapi: '3.1.0',
    info: { title: info.title, version: info.version, description: info.description },
    // The OAS 3.1 base dialect (JSON Schema 2020-12 plus OAS keywords), the default: Swagger UI treats any
    // other value as a dialect it does not support and shows a red error box over the reference.
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: surfaceUrl(config, surface) }],
    paths,
    components: {
      schemas: {
        Problem: jsonSchemaOf(Problem, 'output'),
        ...([...usedCodes].some((code) => errorCodes[code as keyof typeof errorCodes]?.status === 402)
          ? { PaymentProblem: jsonSchemaOf(PaymentProblem, 'output') }
          : {}),
      },
      ...(operations.some(
        (op) =>
          op.http?.surface === surface &&
          (op.access === 'service_key' || op.access === 'bearer' || op.access === 'soul'),
      )
        ? {
            securitySchemes: {
              serviceKey: {
                type: 'apiKey',
                in: 'header',
                name: SERVICE_KEY_HEADER,
                description: 'A service key of your account (`agsvc_sk_...`), issued once by POST /account.',
              },
              bearerToken: {
                type: 'http',
                scheme: 'bearer',
                bearerFormat: 'JWT',
                description:
                  `An access token of the authorization server (${config.auth_url}) issued for ` +
                  `resource=${config.public_api_url}, scope agent-service; discovery at ` +
                  `${config.public_api_url}/.well-known/oauth-protected-resource.`,
              },
              ...(operations.some((op) => op.http?.surface === surface && op.access === 'soul')
                ? {
                    soulToken: {
                      type: 'http',
                      scheme: 'bearer',
                      bearerFormat: 'JWT',
                      description:
                        "A JWT signed by the soul's current key (iss = agent_id, aud = " +
                        `${config.site_url}/api/soul, exp at most 300 s after iat, single-use jti), or an ` +
                        'access token of the linked account (as bearerToken). docs/guides/souls.md.',
                    },
                  }
                : {}),
            },
          }
        : {}),
    },
  };
}

/** The OpenAPI operation of one HTTP binding of `op`; a paid one documents the x402 exchange too. */
function operationEntry(
  op: AnyOperation,
  http: HttpBinding,
  operationId: string,
  config: Config,
  usedCodes: Set<string>,
): JsonSchema {
  const { parameters, requestBody } = requestOf(op, http);
  const responses = responsesOf(op, http, usedCodes);

  return {
    operationId,
    summary: op.title,
    description: op.description,
    tags: op.tags ?? [],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    ...(op.access === 'service_key' ? { security: [{ serviceKey: [] }] } : {}),
    ...(op.access === 'bearer' ? { security: [{ bearerToken: [] }, { serviceKey: [] }] } : {}),
    // Optional at the adapter (a registration may link an account); each write requires it (401).
    ...(op.access === 'soul' ? { security: [{ soulToken: [] }, {}] } : {}),
    responses,
    ...(op.mcp?.length ? { 'x-mcp-tool': op.toolName } : {}),
    ...(op.sku ? { 'x-x402': paymentTerms(op, config) } : {}),
  };
}

/** The parameters (path, query, headers, and a paid operation's) and the JSON body of one HTTP binding. */
function requestOf(op: AnyOperation, http: HttpBinding): { parameters: unknown[]; requestBody: unknown } {
  const input = jsonSchemaOf(op.input, 'input');
  const parameters: unknown[] = [];
  let requestBody: unknown;
  const inPath = new Set(pathParamsOf(http.path));
  const properties = (input.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((input.required ?? []) as string[]);
  for (const [name, schema] of Object.entries(properties)) {
    if (!inPath.has(name) && http.input !== 'query') continue;
    const { description, ...rest } = schema;
    const where = inPath.has(name) ? 'path' : 'query';
    parameters.push({
      name,
      in: where,
      required: where === 'path' || required.has(name),
      description,
      schema: rest,
    });
  }
  if (http.input === 'body') {
    const bodyProperties = Object.fromEntries(
      Object.entries(properties).filter(([name]) => !inPath.has(name)),
    );
    const bodyRequired = [...required].filter((name) => !inPath.has(name));
    const schema = {
      ...input,
      properties: bodyProperties,
      ...(bodyRequired.length ? { required: bodyRequired } : {}),
    };
    if (!bodyRequired.length) delete schema.required;
    requestBody = { required: true, content: { 'application/json': { schema } } };
  }
  for (const header of http.headers ?? []) {
    parameters.push({
      name: header.name,
      in: 'header',
      required: header.required ?? false,
      description: header.description,
      schema: { type: 'string', maxLength: header.maxLength ?? 255 },
    });
  }
  if (op.sku) parameters.push(...paidParameters);
  return { parameters, requestBody };
}

/** The success response of one HTTP binding and a problem response per status its error codes answer with. */
function responsesOf(op: AnyOperation, http: HttpBinding, usedCodes: Set<string>): Record<string, unknown> {
  const codes = [
    ...(op.access === 'service_key' || op.access === 'bearer' || op.access === 'owner' || op.access === 'soul'
      ? (['unauthorized'] as const)
      : []),
    ...(op.errors ?? []),
    ...(http.input === 'body'
      ? (['unsupported_media_type', 'payload_too_large', 'malformed_json', 'malformed_request'] as const)
      : pathParamsOf(http.path).length
        ? (['malformed_request'] as const)
        : []),
    ...(op.sku ? paidCodes : []),
  ];
  const success = String(http.redirect ? 302 : (http.successStatus ?? 200));
  const responses: Record<string, unknown> = {
    [success]: http.redirect
      ? {
          description: `${op.title}: redirected`,
          headers: { Location: { description: 'Where the redirect goes.', schema: { type: 'string' } } },
        }
      : http.representation
        ? {
            description: op.title,
            content: {
              [http.representation.contentType.split(';')[0] as string]: { schema: { type: 'string' } },
            },
          }
        : {
            description: op.title,
            content: { 'application/json': { schema: jsonSchemaOf(op.output, 'output') } },
            ...(op.sku ? { headers: receiptHeaders } : {}),
          },
  };
  for (const code of [...new Set([...codes, 'internal_error' as const])]) {
    usedCodes.add(code);
    const status = String(errorCodes[code].status);
    const existing = responses[status] as { description: string } | undefined;
    const paid = status === '402';
    responses[status] = {
      description: existing ? `${existing.description}; ${code}` : code,
      content: {
        [PROBLEM_CONTENT_TYPE]: {
          schema: { $ref: `#/components/schemas/${paid ? 'PaymentProblem' : 'Problem'}` },
        },
      },
      ...(code === 'rate_limited'
        ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } }
        : {}),
      ...(paid ? { headers: op.sku ? paymentRequiredHeaders : signInRequiredHeaders } : {}),
    };
  }
  for (const [status, description] of Object.entries(http.otherStatuses ?? {})) {
    responses[status] = { description, content: (responses[success] as { content: unknown }).content };
  }
  return responses;
}

/** Suffix of the operationId of a SKU's GET route (its POST route has the operation's own name). */
export const PAID_GET_SUFFIX = 'ByQuery';

const paidCodes = [
  'payment_required',
  'payment_invalid',
  'payment_already_used',
  'payment_settlement_failed',
  'payment_identifier_conflict',
  'sku_unavailable',
  'service_unavailable',
] as const;

/** x402 transport HTTP (specs/transports-v2/http.md), as request headers of a paid route. */
const paidParameters = [
  {
    name: 'PAYMENT-SIGNATURE',
    in: 'header',
    required: false,
    description:
      'x402 v2 payment: base64 of the PaymentPayload (scheme exact, an EIP-3009 authorization signed for ' +
      'the terms of the 402). Without it the answer is 402 with the terms in PAYMENT-REQUIRED. A payload may ' +
      'carry extensions["payment-identifier"].info.id (x402 payment-identifier, 16-128 of [A-Za-z0-9_-]): a ' +
      'retry with a new authorization and the same id gets the first result and receipt, charged once; the ' +
      'same id for another request is 409 payment_identifier_conflict.',
    schema: { type: 'string' },
  },
  {
    name: 'X-PAYMENT',
    in: 'header',
    required: false,
    description: 'x402 v1 payment (base64 PaymentPayload, network by name), for v1 clients.',
    schema: { type: 'string' },
  },
  {
    name: REFERRAL_FIELD,
    in: 'query',
    required: false,
    description:
      'Referral handle credited with payments.referral_share of this payment once settled (also accepted ' +
      'as a body field).',
    schema: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{2,31}$' },
  },
];

const receiptHeaders = {
  'PAYMENT-RESPONSE': {
    description:
      'x402 v2 receipt: base64 JSON {success, id, status, network, transaction, payer}; the id reads back ' +
      'at GET {public_api_url}/payments/{id}. X-PAYMENT-RESPONSE instead for a v1 payer.',
    schema: { type: 'string' },
  },
};

const paymentRequiredHeaders = {
  'PAYMENT-REQUIRED': {
    description:
      'x402 v2 PaymentRequired, base64 JSON: {x402Version: 2, error, resource, accepts: [{scheme: "exact", ' +
      'network, amount, asset, payTo, maxTimeoutSeconds, extra}], extensions: {bazaar, sign-in-with-x (SKUs whose ' +
      'result the paying wallet reads again)}}. v1 clients read the body. ' +
      'A request with no body (or a GET with no query) and no payment is answered 402 with these terms.',
    schema: { type: 'string' },
  },
  'PAYMENT-RESPONSE': {
    description: 'Present when settlement was refused (payment_settlement_failed): the settlement response.',
    schema: { type: 'string' },
  },
};

/** The 402 of a read the paying wallet signs in to (x402 sign-in-with-x): a challenge, nothing for sale. */
const signInRequiredHeaders = {
  'PAYMENT-REQUIRED': {
    description:
      'x402 v2 PaymentRequired, base64 JSON, with accepts: [] (nothing is for sale here) and ' +
      'extensions["sign-in-with-x"]: {info: {domain, uri, version, nonce, issuedAt, expirationTime, statement, ' +
      'resources}, supportedChains: [{chainId, type}], schema} - the CAIP-122 challenge to sign with the wallet ' +
      'that paid and send back as the SIGN-IN-WITH-X header. The problem body carries the same in extensions.',
    schema: { type: 'string' },
  },
};

/** The price of a SKU as OpenAPI readers see it (`x-x402`). */
function paymentTerms(op: AnyOperation, config: Config): JsonSchema {
  const sku = op.sku as NonNullable<AnyOperation['sku']>;
  const network = networkOf(config);
  return {
    price_usdc: sku.usdc,
    pricing: sku.amount ? 'caller_set' : 'fixed',
    scheme: 'exact',
    network: network.caip2,
    asset: network.usdc,
    x402Version: 2,
  };
}

export function asYaml(document: JsonSchema): string {
  return stringify(document, { aliasDuplicateObjects: false, lineWidth: 0 });
}

/**
 * `{site_url}/openapi.json` and `/openapi.yaml`: every REST surface in one OpenAPI 3.1.0 document.
 * A surface under the site's origin keeps its path prefix (`/cs/agent`, `/api/public/scans`); one on
 * another host (routing by `Host`, ARCHITECTURE.md 1) carries its own `servers` on each path item
 * (OpenAPI 3.1.0 section 4.8.9), so the one document stays correct for split-host deployments.
 */
export function siteOpenApiDocument(operations: readonly AnyOperation[], config: Config): JsonSchema {
  const site = new URL(config.site_url);
  const sitePath = site.pathname.replace(/\/+$/, '');
  const paths: Record<string, JsonSchema> = {};
  const schemas: JsonSchema = {};
  const securitySchemes: JsonSchema = {};
  for (const surface of Surface.options) {
    const doc = openApiDocument(surface, operations, config);
    const url = new URL(surfaceUrl(config, surface));
    const under = url.origin === site.origin && `${url.pathname}/`.startsWith(`${sitePath}/`);
    const prefix = under
      ? url.pathname.replace(/\/+$/, '').slice(sitePath.length)
      : url.pathname.replace(/\/+$/, '');
    for (const [path, item] of Object.entries(doc.paths as Record<string, JsonSchema>)) {
      const key = `${prefix}${path}`;
      if (paths[key]) throw new Error(`openapi: ${key} is a path of two surfaces`);
      paths[key] = under ? item : { servers: [{ url: url.origin }], ...item };
    }
    const components = doc.components as { schemas: JsonSchema; securitySchemes?: JsonSchema };
    Object.assign(schemas, components.schemas);
    Object.assign(securitySchemes, components.securitySchemes ?? {});
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent service: every REST surface',
      version: serviceVersion,
      description:
        'Every REST operation of this deployment in one document: the customer service agent ' +
        `(${config.base_url}), the public API (${config.public_api_url}), the paid SKUs sold with x402 ` +
        `(${config.site_url}/api/public/x402/<sku>) and the live catalog (${config.functions_url}). ` +
        `Each surface also has its own document at <surface URL>/openapi.json. The same operations are ` +
        `tools of the MCP servers at ${config.mcp_url} (public) and ${config.mcp_url}/auth (owner-scoped, ` +
        'OAuth 2.1); `x-mcp-tool` names the tool of each operation.',
    },
    // The OAS 3.1 base dialect (JSON Schema 2020-12 plus OAS keywords), the default: Swagger UI treats any
    // other value as a dialect it does not support and shows a red error box over the reference.
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: [{ url: config.site_url }],
    paths,
    components: {
      schemas,
      ...(Object.keys(securitySchemes).length ? { securitySchemes } : {}),
    },
  };
}
