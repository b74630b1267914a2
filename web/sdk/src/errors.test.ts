import { describe, expect, test } from 'vitest';
import { invalid, ServiceError, type ServiceErrorCode } from './errors';

const CODES: ServiceErrorCode[] = [
  'invalid_request_error',
  'iframe_load_error',
  'iframe_timeout_error',
  'already_open_error',
  'network_error',
  'api_error',
];

describe('ServiceError', () => {
  test.each(CODES)('carries the code %s, its message and its class', (code) => {
    const error = new ServiceError(code, 'why it failed');
    expect(error).toBeInstanceOf(ServiceError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe(code);
    expect(error.message).toBe('why it failed');
    expect(error.name).toBe('ServiceError');
  });

  test('invalid() makes an invalid_request_error', () => {
    const error = invalid('bad');
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.code).toBe('invalid_request_error');
    expect(error.message).toBe('bad');
  });
});
