// Errors: the service's JSON error body as an exception, and what the library refused itself.

export class ServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export interface ErrorFields {
  status: number;
  type: string;
  code: string;
  message: string;
  param?: string | null;
  requestId?: string | null;
  headers?: Record<string, string>;
}

/** The service answered with an error: `{"error": {"type", "code", "message", "param"}}`. */
export class ApiError extends ServiceError {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | null;
  readonly requestId: string | null;
  readonly headers: Record<string, string>;

  constructor(f: ErrorFields) {
    const param = f.param ? ` (param ${f.param})` : '';
    super(`${f.status} ${f.code}: ${f.message}${param}${f.requestId ? ` [request ${f.requestId}]` : ''}`);
    this.status = f.status;
    this.type = f.type;
    this.code = f.code;
    this.message = f.message;
    this.param = f.param ?? null;
    this.requestId = f.requestId ?? null;
    this.headers = f.headers ?? {};
  }
}

/** No answer at all (connection refused, dropped, timed out) after the retries were spent. */
export class ConnectionFailed extends ServiceError {}

/** An answer this version of the library cannot read (not JSON, or not the shape of API v1). */
export class DecodeError extends ServiceError {}

/** A webhook delivery whose signature or timestamp does not verify: refuse it (answer 400). */
export class WebhookVerificationError extends ServiceError {}
