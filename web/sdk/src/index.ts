// The public surface of the browser SDK (SPEC 4.3): the loader, the error class, the version and the types.
export { loadService } from './loader';
export type { LoadOptions } from './loader';
export { ServiceError } from './errors';
export type { ServiceErrorCode } from './errors';
export type { CheckoutOptions, RefundRequestOptions } from './options';
export type { ServiceInstance } from './instance';

/** The SDK's own version (SPEC 9). */
export const VERSION = '0.1.1-beta.17';
