// loadService: validates the key and base URL, and caches one instance promise per (publicKey, checkoutUrl).
import { invalid } from './errors';
import { createInstance, type ServiceInstance } from './instance';

export interface LoadOptions {
  /** Overrides the checkout base URL (default: the production checkout origin). */
  checkoutUrl?: string;
}

export const DEFAULT_CHECKOUT_URL = 'https://checkout.service.example';
const KEY_PATTERN = /^pk_(live|test)_[A-Za-z0-9]+$/;

const cache = new Map<string, Promise<ServiceInstance>>();

function baseUrl(options: LoadOptions | undefined): string {
  if (options === undefined) return DEFAULT_CHECKOUT_URL;
  if (typeof options !== 'object' || options === null) {
    throw invalid(`loadService() expects an options object as its second argument. You specified: ${String(options)}.`);
  }
  const { checkoutUrl } = options;
  if (checkoutUrl === undefined) return DEFAULT_CHECKOUT_URL;
  let url: URL | undefined;
  try {
    url = typeof checkoutUrl === 'string' ? new URL(checkoutUrl) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.search || url.hash) {
    throw invalid(
      `Invalid value for loadService(): checkoutUrl should be an absolute http(s) URL without query or fragment. You specified: ${JSON.stringify(checkoutUrl)}.`,
    );
  }
  return checkoutUrl.replace(/\/+$/, '');
}

export function loadService(publicKey: string, options?: LoadOptions): Promise<ServiceInstance> {
  let checkoutUrl: string;
  try {
    if (typeof publicKey !== 'string' || !KEY_PATTERN.test(publicKey)) {
      throw invalid(`Invalid value for loadService(): publicKey should look like pk_live_... or pk_test_.... You specified: ${JSON.stringify(publicKey)}.`);
    }
    checkoutUrl = baseUrl(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const key = `${publicKey} ${checkoutUrl}`;
  let promise = cache.get(key);
  if (!promise) {
    promise = Promise.resolve().then(() => {
      if (typeof window === 'undefined' || typeof document === 'undefined') {
        throw invalid('loadService() runs in a browser only: there is no window or document here.');
      }
      return createInstance(checkoutUrl);
    });
    // A failed load is not cached: the next call tries again.
    promise.catch(() => cache.delete(key));
    cache.set(key, promise);
  }
  return promise;
}
