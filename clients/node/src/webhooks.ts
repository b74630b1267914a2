// Verifying a webhook delivery (pure): the `sha256=` signature over TIMESTAMP.BODY, compared in constant time, with
// the timestamp within a tolerance so that a captured delivery cannot be replayed later.

import { createHmac, timingSafeEqual } from 'node:crypto';

import { DecodeError, WebhookVerificationError } from './errors';
import { decode, type Event } from './models';

export interface VerifyOptions {
  /** Seconds a delivery's timestamp may be from now (default 300). */
  tolerance?: number;
  /** Unix seconds to check against instead of the clock (tests). */
  now?: number;
}

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function header(headers: Headers, name: string): string {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(n: string): string | null }).get(name) ?? '';
  }
  for (const [k, v] of Object.entries(headers)) {
    if (k.toLowerCase() === name) return Array.isArray(v) ? v.join(',') : v ?? '';
  }
  return '';
}

/** The event of a delivery whose signature and timestamp verify; throws WebhookVerificationError otherwise.
 * `payload` is the raw body as received (e.g. `express.raw({type: 'application/json'})`), `headers` Node's
 * request headers or a fetch Headers, `secret` the endpoint's `whsec_...`. During a roll's overlap either
 * secret verifies. */
export function verifyWebhook(payload: Uint8Array | string, headers: Headers, secret: string,
                              options: VerifyOptions = {}): Event {
  const tolerance = options.tolerance ?? 300;
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : Buffer.from(payload);
  const timestamp = header(headers, 'x-service-timestamp');
  if (!/^\d+$/.test(timestamp)) throw new WebhookVerificationError('missing or malformed X-Service-Timestamp header');
  const now = options.now ?? Date.now() / 1000;
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(`timestamp more than ${tolerance} s from now: refused as a possible replay`);
  }
  const digest = createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex');
  const expected = Buffer.from(`sha256=${digest}`);
  const offered = header(headers, 'x-service-signature').split(',').map((s) => Buffer.from(s.trim()));
  // Every value is compared, each in constant time; lengths of signatures are public.
  const matches = offered.filter((s) => s.length === expected.length && timingSafeEqual(s, expected)).length;
  if (!matches) throw new WebhookVerificationError('no signature matches this secret');
  try {
    return decode('Event', JSON.parse(body.toString('utf8')), 'webhook event');
  } catch (error) {
    if (error instanceof SyntaxError || error instanceof DecodeError) {
      throw new WebhookVerificationError(`the signed body is not an event: ${error.message}`);
    }
    throw error;
  }
}

/** The endpoint secret in the form the `standardwebhooks` libraries take: `whsec_` + standard base64 of its bytes
 * (secrets issued before the Standard Webhooks headers were url-safe base64 without padding). */
export function standardWebhooksSecret(secret: string): string {
  const text = secret.replace(/^whsec_/, '');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(text)) throw new TypeError('a webhook secret is whsec_ followed by base64');
  return 'whsec_' + Buffer.from(text.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('base64');
}
