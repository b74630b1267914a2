// The public surface of the browser SDK (docs/spec.md §4.3): the loader, the error class, the version and the types.
export { loadService } from './loader';
export type { LoadOptions } from './loader';
export { ServiceError } from './errors';
export type { ServiceErrorCode } from './errors';
export type { CheckoutOptions, RefundRequestOptions } from './options';
export type { ServiceInstance } from './instance';

/** The SDK's own version (docs/spec.md §9). */
export const VERSION = '0.1.1-beta.17';
