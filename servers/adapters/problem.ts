/**
 * RFC 9457 problem details for every REST error. `type` is a URL under the site that documents the
 * code; `code` is the stable machine-readable name; `errors` lists failing fields for validation.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { z } from 'zod';
import { errorCodes, type ServiceError } from '../errors.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export const Problem = z
  .object({
    type: z.url().describe('URL documenting the error code.'),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.enum(Object.keys(errorCodes) as [keyof typeof errorCodes, ...(keyof typeof errorCodes)[]]),
    instance: z.string().describe('Path of the request.'),
    request_id: z.string().describe('Quote it when reporting a problem.'),
    errors: z
      .array(z.object({ field: z.string(), message: z.string() }))
      .optional()
      .describe(
        'Failing fields (validation_failed, malformed_request, malformed_json: the member and byte at fault).',
      ),
    retry_after_s: z
      .number()
      .int()
      .optional()
      .describe(
        'Seconds to wait before trying again, as in the Retry-After header (rate_limited, service_unavailable, ' +
          'payment_already_used while the first request with that payment still runs). MCP and A2A tool failures carry it too.',
      ),
  })
  .describe('RFC 9457 problem details.');
export type Problem = z.infer<typeof Problem>;

/**
 * A 402 of a paid endpoint: the problem, plus - for x402 v1 clients, which read the terms from the
 * body - the v1 PaymentRequired members (RFC 9457 section 3.2 extension members). v2 clients read
 * the base64 `PAYMENT-REQUIRED` header.
 */
export const PaymentProblem = Problem.extend({
  x402Version: z.literal(1).optional().describe('x402 v1: the terms below are for v1 clients.'),
  error: z.string().optional().describe('x402 error reason.'),
  accepts: z
    .array(z.record(z.string(), z.unknown()))
    .optional()
    .describe('x402 v1 PaymentRequirements (network by name, maxAmountRequired).'),
  extensions: z
    .record(z.string(), z.unknown())
    .optional()
    .describe(
      'sign_in_required, sign_in_invalid: the x402 extensions of PAYMENT-REQUIRED - `sign-in-with-x`, the ' +
        'CAIP-122 challenge to sign with the wallet that paid and send back as the SIGN-IN-WITH-X header.',
    ),
}).describe('RFC 9457 problem details of a 402, with the x402 v1 PaymentRequired members.');

export function problemTypeUrl(siteUrl: string, code: string): string {
  return `${siteUrl}/problems/${code}`;
}

/**
 * Sends `err` as problem+json. Works on any node:http exchange (Express's, or `direct-routes.ts`'s):
 * `req.id` is the request id, `originalUrl` (Express) or `url` the path reported as `instance`.
 */
export function sendProblem(
  req: IncomingMessage & { originalUrl?: string },
  res: ServerResponse,
  err: ServiceError,
  siteUrl: string,
): void {
  const body: Problem = {
    type: problemTypeUrl(siteUrl, err.code),
    title: err.title,
    status: err.status,
    detail: err.publicDetail,
    code: err.code,
    instance: (req.originalUrl ?? req.url ?? '/').split('?')[0] || '/',
    request_id: String(req.id),
    ...(err.errors ? { errors: err.errors } : {}),
  };
  Object.assign(body, err.extensions);
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  const payment = err.payment;
  if (payment) {
    // x402 transport HTTP (specs/transports-v2/http.md): the terms in PAYMENT-REQUIRED, a refused
    // settlement in PAYMENT-RESPONSE (X-PAYMENT-RESPONSE for a v1 payer), v1 terms in the body.
    res.setHeader(
      'PAYMENT-REQUIRED',
      encodePaymentRequiredHeader(payment.required as unknown as PaymentRequired),
    );
    if (payment.settlement) {
      res.setHeader(
        payment.v1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE',
        encodePaymentResponseHeader(payment.settlement as unknown as SettleResponse),
      );
    }
    res.setHeader('Cache-Control', 'no-store');
    Object.assign(body, payment.v1 ?? {});
  }
  res.statusCode = err.status;
  res.setHeader('Content-Type', `${PROBLEM_CONTENT_TYPE}; charset=utf-8`);
  res.end(JSON.stringify(body));
}
