import { beforeEach, describe, expect, test, vi } from 'vitest';
import type { ServiceError } from './errors';
import type * as Loader from './loader';
import { cleanup, lastFrame, stubFetch } from './testing';

// A fresh module per test, so every test starts with an empty cache.
let loader: typeof Loader;
beforeEach(async () => {
  vi.resetModules();
  loader = await import('./loader');
  stubFetch();
  return cleanup;
});

const rejection = async (promise: Promise<unknown>): Promise<ServiceError> => {
  try {
    await promise;
  } catch (error) {
    return error as ServiceError;
  }
  throw new Error('expected a rejection');
};

describe('loadService rejects', () => {
  // Every invalid input is a row: [what, publicKey, options, what the message names].
  test.each([
    ['no key', undefined, undefined, 'publicKey'],
    ['an empty key', '', undefined, 'publicKey'],
    ['a secret key', 'sk_live_abc123', undefined, 'publicKey'],
    ['an unknown mode', 'pk_prod_abc123', undefined, 'publicKey'],
    ['an empty key body', 'pk_test_', undefined, 'publicKey'],
    ['a key with a dash', 'pk_test_ab-c', undefined, 'publicKey'],
    ['a key with a space', 'pk_live_ab c', undefined, 'publicKey'],
    ['a key with a newline at the end', 'pk_live_abc\n', undefined, 'publicKey'],
    ['an upper-case prefix', 'PK_TEST_abc', undefined, 'publicKey'],
    ['a number', 42, undefined, 'publicKey'],
    ['options not an object', 'pk_test_abc', 'https://c.example', 'options object'],
    ['a relative checkoutUrl', 'pk_test_abc', { checkoutUrl: '/checkout' }, 'checkoutUrl'],
    ['a checkoutUrl that is no URL', 'pk_test_abc', { checkoutUrl: 'not a url' }, 'checkoutUrl'],
    ['a non-http checkoutUrl', 'pk_test_abc', { checkoutUrl: 'ftp://c.example' }, 'checkoutUrl'],
    ['a checkoutUrl with a query', 'pk_test_abc', { checkoutUrl: 'https://c.example/?a=1' }, 'checkoutUrl'],
    ['a checkoutUrl with a fragment', 'pk_test_abc', { checkoutUrl: 'https://c.example/#x' }, 'checkoutUrl'],
    ['a checkoutUrl that is a number', 'pk_test_abc', { checkoutUrl: 1 }, 'checkoutUrl'],
  ])('%s with invalid_request_error', async (_, key, options, message) => {
    const error = await rejection(loader.loadService(key as string, options as Loader.LoadOptions));
    expect(error.name).toBe('ServiceError');
    expect(error.code).toBe('invalid_request_error');
    expect(error.message).toContain(message);
  });
});

describe('loadService', () => {
  test.each(['pk_live_abc123', 'pk_test_ABC', 'pk_test_0'])('accepts %s', async (key) => {
    const sdk = await loader.loadService(key);
    expect(typeof sdk.checkout).toBe('function');
    expect(typeof sdk.close).toBe('function');
    expect(typeof sdk.openRefundRequest).toBe('function');
  });

  // Each row: the checkoutUrl given, and the page URL a checkout then opens.
  test.each([
    [undefined, 'https://checkout.service.example/c/cs_1?sdk_mode=popup'],
    [{}, 'https://checkout.service.example/c/cs_1?sdk_mode=popup'],
    [{ checkoutUrl: 'https://pay.test' }, 'https://pay.test/c/cs_1?sdk_mode=popup'],
    [{ checkoutUrl: 'https://pay.test/' }, 'https://pay.test/c/cs_1?sdk_mode=popup'],
    [{ checkoutUrl: 'https://pay.test///' }, 'https://pay.test/c/cs_1?sdk_mode=popup'],
    [{ checkoutUrl: 'http://localhost:8080/' }, 'http://localhost:8080/c/cs_1?sdk_mode=popup'],
    [{ checkoutUrl: 'https://pay.test/sandbox/' }, 'https://pay.test/sandbox/c/cs_1?sdk_mode=popup'],
  ])('checkoutUrl %o opens %s', async (options, url) => {
    const sdk = await loader.loadService('pk_test_abc', options);
    sdk.checkout({ sessionId: 'cs_1' });
    expect(lastFrame().src).toBe(url);
  });

  test('the default is the production checkout origin', () => {
    expect(loader.DEFAULT_CHECKOUT_URL).toBe('https://checkout.service.example');
  });

  test('caches one promise per (publicKey, checkoutUrl)', async () => {
    const first = loader.loadService('pk_test_abc');
    expect(loader.loadService('pk_test_abc')).toBe(first);
    expect(loader.loadService('pk_test_abc', { checkoutUrl: 'https://checkout.service.example/' })).toBe(first);
    expect(loader.loadService('pk_live_abc')).not.toBe(first);
    expect(loader.loadService('pk_test_abc', { checkoutUrl: 'https://pay.test' })).not.toBe(first);
    expect(await loader.loadService('pk_test_abc')).toBe(await first);
  });

  test('outside a browser it rejects, and the failure is not cached', async () => {
    vi.stubGlobal('document', undefined);
    const failed = loader.loadService('pk_test_abc');
    const error = await rejection(failed);
    expect(error.code).toBe('invalid_request_error');
    expect(error.message).toContain('browser');
    vi.unstubAllGlobals();
    const retried = loader.loadService('pk_test_abc');
    expect(retried).not.toBe(failed);
    await expect(retried).resolves.toHaveProperty('checkout');
  });

  test('invalid input is never cached', async () => {
    const a = loader.loadService('bad');
    const b = loader.loadService('bad');
    expect(a).not.toBe(b);
    await Promise.allSettled([a, b]);
  });
});
