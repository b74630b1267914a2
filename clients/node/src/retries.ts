// When to retry and how long to wait (pure): the same rules as the Python library (service_client/retries.py).

export const MAX_RETRY_AFTER_S = 60;
const INITIAL_DELAY_S = 0.5;
const MAX_DELAY_S = 8;

/** No answer, 429, 503, 504, 409 while the same key's first request runs, or a write refused only because its
 * signature had been seen (two identical requests in one second): each changed nothing or is safe to repeat. */
export function retryable(status: number | null, code: string | null): boolean {
  if (status === null || status === 429 || status === 503 || status === 504) return true;
  return (status === 409 && code === 'idempotency_key_in_use') || (status === 401 && code === 'signature_replayed');
}

export function retryAfter(headers: Record<string, string>): number | null {
  const value = headers['retry-after'];
  if (value === undefined || value.trim() === '') return null;
  const seconds = Number(value);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : null;
}

/** Seconds before retry number `n` (1, 2, ...), or null when the answer asks for a longer wait than a client should
 * hold a call. Exponential, jittered in its upper half; a Retry-After is the least wait; a replayed signature
 * waits for the next second, whose signature differs. */
export function delay(n: number, headers: Record<string, string>, code: string | null, nowS: number,
                      jitter: () => number = Math.random): number | null {
  const backoff = Math.min(MAX_DELAY_S, INITIAL_DELAY_S * 2 ** (n - 1)) * (0.5 + jitter() / 2);
  if (code === 'signature_replayed') return 1 - (nowS % 1) + 0.01;
  const asked = retryAfter(headers);
  if (asked === null) return backoff;
  if (asked > MAX_RETRY_AFTER_S) return null;
  return asked + 0.1 * jitter();
}
