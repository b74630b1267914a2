import { expect, test } from 'vitest';
import pkg from '../package.json';
import * as sdk from './index';
import { ServiceError } from './errors';
import { loadService } from './loader';

test('exports exactly loadService, ServiceError and VERSION at runtime', () => {
  expect(Object.keys(sdk).sort()).toEqual(['ServiceError', 'VERSION', 'loadService']);
  expect(sdk.loadService).toBe(loadService);
  expect(sdk.ServiceError).toBe(ServiceError);
});

test('VERSION is the version of docs/spec.md §9 and the package version', () => {
  expect(sdk.VERSION).toBe('0.1.1-beta.17');
  expect(pkg.version).toBe(sdk.VERSION);
});

test('the public types are exported', () => {
  // A compile-time check: this file does not type-check (npm run typecheck) if a type goes missing.
  const options: sdk.CheckoutOptions = { sessionId: 'cs_1', mode: 'popup' };
  const refund: sdk.RefundRequestOptions = { token: 'rfqt_1' };
  const load: sdk.LoadOptions = { checkoutUrl: 'https://c.example' };
  const code: sdk.ServiceErrorCode = 'api_error';
  const instance: sdk.ServiceInstance | undefined = undefined;
  expect([options.sessionId, refund.token, load.checkoutUrl, code, instance]).toHaveLength(5);
});
