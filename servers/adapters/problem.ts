/**
 * RFC 9457 problem details for every REST error. `type` is a URL under the site that documents the
 * code; `code` is the stable machine-readable name; `errors` lists failing fields for validation.
 */
import type { Request, Response } from 'express';
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
      .describe('Failing fields (validation_failed, malformed_request).'),
  })
  .describe('RFC 9457 problem details.');
export type Problem = z.infer<typeof Problem>;

export function problemTypeUrl(siteUrl: string, code: string): string {
  return `${siteUrl}/problems/${code}`;
}

export function sendProblem(req: Request, res: Response, err: ServiceError, siteUrl: string): void {
  const body: Problem = {
    type: problemTypeUrl(siteUrl, err.code),
    title: err.title,
    status: err.status,
    detail: err.publicDetail,
    code: err.code,
    instance: req.originalUrl.split('?')[0] ?? '/',
    request_id: String(req.id),
    ...(err.errors ? { errors: err.errors } : {}),
  };
  for (const [name, value] of Object.entries(err.headers)) res.setHeader(name, value);
  res.status(err.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(body));
}
