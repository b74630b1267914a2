// The one error class the SDK raises or hands to onError (docs/spec.md §7).

export type ServiceErrorCode =
  | 'invalid_request_error'
  | 'iframe_load_error'
  | 'iframe_timeout_error'
  | 'already_open_error'
  | 'network_error'
  | 'api_error';

export class ServiceError extends Error {
  readonly code: ServiceErrorCode;

  constructor(code: ServiceErrorCode, message: string) {
    super(message);
    this.name = 'ServiceError';
    this.code = code;
    // Keeps `instanceof` true when the class is down-levelled to ES5 by a merchant's bundler.
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** Shorthand for the synchronous argument errors. */
export const invalid = (message: string): ServiceError =>
  new ServiceError('invalid_request_error', message);
