// The client: one method per row of OPERATIONS, each signed, retried by the rules of retries.ts with its
// Idempotency-Key kept, and decoded into its model; list methods are async iterables that fetch pages lazily; a file
// download answers an ExportFile that streams the body.

import { createHmac, randomUUID } from 'node:crypto';

import { ApiError, ConnectionFailed, DecodeError } from './errors';
import { ExportFile, type OpenBody } from './exports';
import { decode, type Models, type ResponseInfo } from './models';
import { OPERATIONS, RENAMED_PARAMS, type ModelName, type Operation } from './operations';
import { delay, retryable } from './retries';
import { API_VERSION, VERSION } from './version';

export interface ClientOptions {
  publicKey: string;
  secretKey: string;
  baseUrl: string;
  /** Fills {merchant_id} in paths unless a call gives `merchant_id`. */
  merchantId?: string;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Per attempt (default 30000); for an export, until its answer starts and then between two chunks. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Sent on every attempt of a write; a UUID is made when none is given. */
  idempotencyKey?: string;
}

export type Params = Record<string, unknown>;
/** Path ids first, in the order of the path; then the body (writes) or the query (reads); then RequestOptions. */
export type Args = Array<string | Params | RequestOptions | undefined>;
export type WithResponse<T> = T & { readonly lastResponse: ResponseInfo };

type Ops = (typeof OPERATIONS)[number];
type MethodOf<O> = O extends { pages: true; returns: infer R extends ModelName }
  ? (...args: Args) => AsyncIterable<WithResponse<Models[R]>>
  : O extends { streams: true; returns: infer R extends ModelName } ? (...args: Args) => Promise<ExportFile<R>>
  : O extends { returns: infer R extends ModelName } ? (...args: Args) => Promise<WithResponse<Models[R]>> : never;
export type Resources = {
  [R in Ops['resource']]: { [O in Extract<Ops, { resource: R }> as O['name']]: MethodOf<O> };
};

const USER_AGENT = `service-client-node/${VERSION} (API ${API_VERSION})`;
const WRITES = new Set(['POST', 'PATCH', 'DELETE']);

interface Call { op: Operation; path: string; body: string; idempotencyKey: string | null }
interface Answer { body: Params; info: ResponseInfo; file?: OpenBody }

function sleep(seconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

function queryValue(value: unknown): string {
  if (value instanceof Date) return value.toISOString();
  return typeof value === 'boolean' ? (value ? 'true' : 'false') : String(value);
}

export class ServiceClient {
  readonly livemode: boolean;
  private readonly options: Required<Omit<ClientOptions, 'merchantId'>> & { merchantId?: string };

  constructor(options: ClientOptions) {
    if (!/^pk_(test|live)_/.test(options.publicKey ?? '') || !options.secretKey) {
      throw new TypeError('publicKey is pk_test_... or pk_live_..., with its secretKey (sk_...)');
    }
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    this.options = { maxRetries: 2, timeoutMs: 30000, fetch: globalThis.fetch, ...options,
      baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.livemode = options.publicKey.startsWith('pk_live_');
    for (const op of OPERATIONS as readonly Operation[]) {
      const self = this as unknown as Record<string, Record<string, unknown>>;
      self[op.resource] ??= {};
      self[op.resource][op.name] = op.pages
        ? (...args: Args) => this.pages(op, args)
        : (...args: Args) => this.request(op, args);
    }
  }

  private build(op: Operation, args: Args): Call {
    const ids = args.filter((a): a is string => typeof a === 'string');
    const objects = args.filter((a): a is Params => typeof a === 'object' && a !== null);
    const params: Params = { ...(objects[0] ?? {}) };
    const options = (objects[1] ?? {}) as RequestOptions;
    const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const [old, renamed] of Object.entries(RENAMED_PARAMS)) {
      if (old in params && names.includes(renamed) && !(renamed in params)) {
        params[renamed] = params[old];
        delete params[old];
      }
    }
    const positional = names.filter((n) => n !== 'merchant_id');
    if (ids.length > positional.length) {
      throw new TypeError(`${op.resource}.${op.name} takes ${positional.length} id(s): ${positional.join(', ')}`);
    }
    const values: Record<string, string> = {};
    positional.forEach((n, i) => { if (ids[i] !== undefined) values[n] = ids[i]; });
    for (const n of names) {
      if (n in params) { values[n] = String(params[n]); delete params[n]; }
    }
    if (names.includes('merchant_id') && !values.merchant_id) {
      if (!this.options.merchantId) {
        throw new TypeError(`${op.resource}.${op.name} needs merchantId: give it to the client or the call`);
      }
      values.merchant_id = this.options.merchantId;
    }
    const missing = names.filter((n) => !values[n]);
    if (missing.length) throw new TypeError(`${op.resource}.${op.name} is missing ${missing.join(', ')}`);
    let path = op.path.replace(/\{(\w+)\}/g, (_, n: string) => encodeURIComponent(values[n]));
    let body = '';
    if (op.method === 'POST' || op.method === 'PATCH') {
      body = JSON.stringify(params);
    } else {
      const query = Object.entries(params).filter(([, v]) => v !== undefined && v !== null)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(queryValue(v))}`).join('&');
      if (query) path += `?${query}`;
    }
    const idempotencyKey = WRITES.has(op.method) ? options.idempotencyKey ?? randomUUID() : null;
    return { op, path, body, idempotencyKey };
  }

  private headers(call: Call): Record<string, string> {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const signature = createHmac('sha256', this.options.secretKey)
      .update(`${call.op.method}\n${call.path}\n${timestamp}\n${call.body}`).digest('hex');
    const accept = call.op.streams ? 'text/csv, application/x-ndjson, application/json' : 'application/json';
    const headers: Record<string, string> = { 'User-Agent': USER_AGENT, Accept: accept,
      'X-Client-ID': this.options.publicKey, 'X-Timestamp': timestamp, 'X-Signature': signature };
    if (call.body) headers['Content-Type'] = 'application/json';
    if (call.idempotencyKey) headers['Idempotency-Key'] = call.idempotencyKey;
    return headers;
  }

  /** The decoded answer, after the retries; a file download's open body once it succeeded (its errors, which come
   * before the file starts, are read and retried like any other). */
  private async send(call: Call): Promise<Answer> {
    const where = `${call.op.method} ${call.path}`;
    for (let attempt = 1; ; attempt++) {
      let status: number | null = null;
      let headers: Record<string, string> = {};
      let parsed: unknown = null;
      let failure: unknown = null;
      const controller = new AbortController();
      const abort = (reason: Error) => controller.abort(reason);
      const timer = setTimeout(() => abort(new Error(`no answer within ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs);
      try {
        const res = await this.options.fetch(this.options.baseUrl + call.path, {
          method: call.op.method, headers: this.headers(call), body: call.body || undefined, redirect: 'manual',
          signal: controller.signal,
        });
        status = res.status;
        headers = Object.fromEntries([...res.headers.entries()].map(([k, v]) => [k.toLowerCase(), v]));
        if (call.op.streams && status < 400) {
          const info = { status, headers, requestId: headers['x-request-id'] ?? null, attempts: attempt };
          return { body: {}, info, file: { response: res, abort } };
        }
        parsed = parse(await res.text(), status, headers, where);
      } catch (error) {
        if (error instanceof DecodeError) throw error;
        failure = error;
        status = null;
      } finally {
        clearTimeout(timer);
      }
      const requestId = headers['x-request-id'] ?? null;
      const info: ResponseInfo = { status: status ?? 0, headers, requestId, attempts: attempt };
      if (status !== null && status < 400) {
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          throw new DecodeError(`${where}: answered ${status} without a JSON object`);
        }
        return { body: parsed as Params, info };
      }
      const error = (parsed as { error?: Record<string, string> } | null)?.error ?? {};
      const code = status === null ? null : error.code ?? null;
      const wait = retryable(status, code) ? delay(attempt, headers, code, Date.now() / 1000) : null;
      if (wait === null || attempt > this.options.maxRetries) {
        if (status === null) {
          const cause = String((failure as Error)?.cause ?? failure);
          throw new ConnectionFailed(`${where}: no answer after ${attempt} attempt(s): ${cause}`);
        }
        throw new ApiError({ status, type: error.type ?? 'api_error', code: error.code ?? `http_${status}`,
          message: error.message ?? `${where} answered ${status}`, param: error.param ?? null,
          requestId: error.request_id ?? headers['x-request-id'] ?? null, headers });
      }
      await sleep(wait);
    }
  }

  private async request(op: Operation, args: Args): Promise<unknown> {
    const { body, info, file } = await this.send(this.build(op, args));
    if (file) return new ExportFile(file, op.returns, info, `${op.resource}.${op.name}`, this.options.timeoutMs);
    return withResponse(decode(op.returns, body, `${op.resource}.${op.name}`), info);
  }

  private pages(op: Operation, args: Args): AsyncIterable<unknown> {
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        const ids = args.filter((a) => typeof a === 'string') as string[];
        const params = (args.find((a) => typeof a === 'object' && a !== null) ?? {}) as Params;
        let cursor: string | null = null;
        do {
          const { body, info } = await self.send(self.build(op, [...ids, cursor ? { ...params, cursor } : params]));
          if (!Array.isArray(body.data)) {
            throw new DecodeError(`${op.resource}.${op.name}: a list answer without \`data\``);
          }
          for (const item of body.data) yield withResponse(decode(op.returns, item, `${op.resource}.${op.name}`), info);
          cursor = body.has_more ? (body.next_cursor as string | null) ?? null : null;
        } while (cursor);
      },
    };
  }
}

function parse(text: string, status: number, headers: Record<string, string>, where: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    if (status >= 500) return null; // a proxy's error page: the status says enough
    const type = headers['content-type'] ?? 'no content type';
    throw new DecodeError(`${where}: answered ${status} with a body that is not JSON (${type})`);
  }
}

function withResponse<T extends object>(obj: T, info: ResponseInfo): WithResponse<T> {
  Object.defineProperty(obj, 'lastResponse', { value: info, enumerable: false });
  return obj as WithResponse<T>;
}

// The resource namespaces are made at run time from OPERATIONS; this merge gives them their types.
export interface ServiceClient extends Resources {}
