/**
 * Standard Webhooks (standardwebhooks.com), the signing side: how every webhook the service sends
 * is signed - return requests to brands, notifications to requesters' agents, marketplace
 * deliveries - and checked where the service receives one.
 */
import { createHmac } from 'node:crypto';

/**
 * Standard Webhooks signature (standardwebhooks.com): `v1,` + base64 HMAC-SHA256 over
 * `{webhook-id}.{webhook-timestamp}.{raw body}` with the secret's bytes (`whsec_` + base64).
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}
