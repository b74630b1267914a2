import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { ServiceError } from './errors';
import { openFrame, type FrameCallbacks, type FrameConfig } from './frame';
import type { Plan, SignRequest } from './options';
import { cleanup, closeButtons, flush, lastFrame, ORIGIN, post, stubFetch } from './testing';

type Result = { ok: string };

function callbacks() {
  return {
    onReady: vi.fn<() => void>(),
    onSuccess: vi.fn<(result: Result) => void>(),
    onCancel: vi.fn<() => void>(),
    onError: vi.fn<(error: ServiceError) => void>(),
    onSignRequest: vi.fn<(request: SignRequest) => Promise<string>>(),
  } satisfies Required<FrameCallbacks<Result>>;
}

function open(plan: Partial<Plan> = {}, config: Partial<FrameConfig<Result>> = {}) {
  const cb = callbacks();
  const onClosed = vi.fn();
  const dismiss = openFrame<Result>({
    plan: { mode: 'popup', url: `${ORIGIN}/c/cs_1?sdk_mode=popup`, container: null, width: 560, height: 780, timeoutMs: 0, ...plan },
    title: 'Checkout',
    callbacks: cb,
    readSuccess: (m) => (typeof m.ok === 'string' ? { ok: m.ok } : undefined),
    closeOnSuccess: true,
    onClosed,
    ...config,
  });
  return { cb, dismiss, onClosed, iframe: lastFrame() };
}

const isOpen = (iframe: HTMLIFrameElement): boolean => iframe.isConnected;

beforeEach(() => {
  stubFetch();
});
afterEach(() => {
  vi.useRealTimers();
  cleanup();
});

describe('the iframe', () => {
  test('loads the plan URL with payment and clipboard permissions and a title', () => {
    const { iframe } = open();
    expect(iframe.src).toBe(`${ORIGIN}/c/cs_1?sdk_mode=popup`);
    expect(iframe.getAttribute('allow')).toBe('payment; clipboard-write');
    expect(iframe.title).toBe('Checkout');
  });

  test('embed: mounts in the container at full width and follows SERVICE_RESIZE within 200..2000', () => {
    const container = document.createElement('div');
    document.body.append(container);
    const { iframe } = open({ mode: 'embed', container });
    expect(iframe.parentElement).toBe(container);
    expect(iframe.style.width).toBe('100%');
    expect(document.querySelector('[role="dialog"]')).toBeNull();
    for (const [asked, got] of [[50, '200px'], [200, '200px'], [1234, '1234px'], [2000, '2000px'], [2001, '2000px']]) {
      post('SERVICE_RESIZE', { height: asked, width: 10 });
      expect(iframe.style.height).toBe(got);
      expect(iframe.style.width).toBe('100%');
    }
  });
});

describe('messages are accepted only from our iframe on the checkout origin', () => {
  const other = (): Window => {
    const stranger = document.createElement('iframe');
    document.body.append(stranger);
    return stranger.contentWindow as Window;
  };
  // Each row sends SERVICE_CANCEL in a way that must be ignored.
  test.each([
    ['another origin', () => ({ origin: 'https://evil.example' })],
    ['the origin with another port', () => ({ origin: `${ORIGIN}:8443` })],
    ['the origin over http', () => ({ origin: ORIGIN.replace('https', 'http') })],
    ['another window on the right origin', () => ({ source: other() })],
    ['the merchant window itself', () => ({ source: window as Window })],
    ['no source', () => ({ source: null })],
    ['another envelope source', () => ({ envelope: 'stripe' })],
  ])('ignores %s', (_, how) => {
    const { cb, iframe } = open();
    post('SERVICE_CANCEL', {}, how());
    expect(cb.onCancel).not.toHaveBeenCalled();
    expect(isOpen(iframe)).toBe(true);
  });

  test.each([
    ['a string', 'SERVICE_CANCEL'],
    ['null', null],
    ['an unknown type', { source: 'service', type: 'SERVICE_EXPLODE' }],
  ])('ignores data that is %s', (_, data) => {
    const { cb, iframe } = open();
    window.dispatchEvent(new MessageEvent('message', { data, origin: ORIGIN, source: iframe.contentWindow }));
    expect(cb.onCancel).not.toHaveBeenCalled();
    expect(isOpen(iframe)).toBe(true);
  });

  test('accepts the same message from our iframe', () => {
    const { cb, iframe } = open();
    post('SERVICE_CANCEL');
    expect(cb.onCancel).toHaveBeenCalledTimes(1);
    expect(isOpen(iframe)).toBe(false);
  });
});

describe('page messages', () => {
  test('SERVICE_READY calls onReady once', () => {
    const { cb } = open();
    post('SERVICE_READY');
    post('SERVICE_READY');
    expect(cb.onReady).toHaveBeenCalledTimes(1);
  });

  test('SERVICE_SUCCESS closes, calls onSuccess with the result, never onCancel', () => {
    const { cb, iframe, onClosed } = open();
    post('SERVICE_SUCCESS', { ok: 'yes' });
    expect(cb.onSuccess).toHaveBeenCalledWith({ ok: 'yes' });
    expect(isOpen(iframe)).toBe(false);
    expect(onClosed).toHaveBeenCalledTimes(1);
    expect(cb.onCancel).not.toHaveBeenCalled();
  });

  test('the frame is already closed when onSuccess runs', () => {
    const seen: boolean[] = [];
    const { cb, iframe } = open();
    cb.onSuccess.mockImplementation(() => seen.push(iframe.isConnected));
    post('SERVICE_SUCCESS', { ok: 'yes' });
    expect(seen).toEqual([false]);
  });

  test('a malformed SERVICE_SUCCESS is ignored', () => {
    const { cb, iframe } = open();
    post('SERVICE_SUCCESS', { ok: 1 });
    expect(cb.onSuccess).not.toHaveBeenCalled();
    expect(isOpen(iframe)).toBe(true);
  });

  test('without closeOnSuccess: stays open, onSuccess once, and a later dismiss calls no onCancel', () => {
    const { cb, iframe, dismiss } = open({}, { closeOnSuccess: false });
    post('SERVICE_SUCCESS', { ok: 'a' });
    post('SERVICE_SUCCESS', { ok: 'b' });
    expect(isOpen(iframe)).toBe(true);
    expect(cb.onSuccess).toHaveBeenCalledTimes(1);
    expect(cb.onSuccess).toHaveBeenCalledWith({ ok: 'a' });
    dismiss();
    expect(isOpen(iframe)).toBe(false);
    expect(cb.onCancel).not.toHaveBeenCalled();
  });

  test('SERVICE_CANCEL closes and calls onCancel once', () => {
    const { cb, iframe } = open();
    const source = iframe.contentWindow;
    post('SERVICE_CANCEL', {}, { frame: iframe });
    post('SERVICE_CANCEL', {}, { frame: iframe, source });
    expect(isOpen(iframe)).toBe(false);
    expect(cb.onCancel).toHaveBeenCalledTimes(1);
  });

  test('SERVICE_ERROR closes and reports iframe_load_error without onCancel', () => {
    const { cb, iframe } = open();
    post('SERVICE_ERROR', { code: 'session_not_found', message: 'No such session' });
    expect(isOpen(iframe)).toBe(false);
    expect(cb.onCancel).not.toHaveBeenCalled();
    const error = cb.onError.mock.calls[0][0] as ServiceError;
    expect(error).toBeInstanceOf(ServiceError);
    expect(error.code).toBe('iframe_load_error');
    expect(error.message).toContain('session_not_found: No such session');
  });

  test('the close button, Escape and the backdrop each call onCancel exactly once', () => {
    for (const act of [
      (close: HTMLElement) => close.click(),
      () => document.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape' })),
      (close: HTMLElement) => (close.parentElement?.parentElement as HTMLElement).click(),
    ]) {
      const { cb, iframe } = open();
      const [close] = closeButtons();
      act(close);
      act(close);
      expect(isOpen(iframe)).toBe(false);
      expect(cb.onCancel).toHaveBeenCalledTimes(1);
    }
  });

  test('messages after close are ignored', () => {
    const { cb, dismiss, iframe } = open();
    dismiss();
    window.dispatchEvent(new MessageEvent('message', { data: { source: 'service', type: 'SERVICE_SUCCESS', ok: 'x' }, origin: ORIGIN, source: iframe.contentWindow }));
    expect(cb.onSuccess).not.toHaveBeenCalled();
  });
});

describe('load failures', () => {
  test('no SERVICE_READY within timeoutMs: iframe_timeout_error, closed, no onCancel', () => {
    vi.useFakeTimers();
    const { cb, iframe } = open({ timeoutMs: 1000 });
    vi.advanceTimersByTime(999);
    expect(cb.onError).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(cb.onError).toHaveBeenCalledTimes(1);
    expect((cb.onError.mock.calls[0][0] as ServiceError).code).toBe('iframe_timeout_error');
    expect(isOpen(iframe)).toBe(false);
    expect(cb.onCancel).not.toHaveBeenCalled();
  });

  test('SERVICE_READY in time cancels the timeout', () => {
    vi.useFakeTimers();
    const { cb, iframe } = open({ timeoutMs: 1000 });
    vi.advanceTimersByTime(500);
    post('SERVICE_READY');
    vi.advanceTimersByTime(10_000);
    expect(cb.onError).not.toHaveBeenCalled();
    expect(isOpen(iframe)).toBe(true);
  });

  test('timeoutMs 0 never times out', () => {
    vi.useFakeTimers();
    const { cb, iframe } = open({ timeoutMs: 0 });
    vi.advanceTimersByTime(10 * 60_000);
    expect(cb.onError).not.toHaveBeenCalled();
    expect(isOpen(iframe)).toBe(true);
  });

  test('closing first clears the timeout', () => {
    vi.useFakeTimers();
    const { cb, dismiss } = open({ timeoutMs: 1000 });
    dismiss();
    vi.advanceTimersByTime(5000);
    expect(cb.onError).not.toHaveBeenCalled();
    expect(cb.onCancel).toHaveBeenCalledTimes(1);
  });

  test('probes the page with a no-cors fetch', () => {
    const fetch = stubFetch();
    open();
    expect(fetch).toHaveBeenCalledWith(`${ORIGIN}/c/cs_1?sdk_mode=popup`, { mode: 'no-cors' });
  });

  test('a probe that rejects: iframe_load_error, closed, no onCancel', async () => {
    stubFetch(() => Promise.reject(new TypeError('Failed to fetch')));
    const { cb, iframe } = open();
    expect(cb.onError).not.toHaveBeenCalled();
    await flush();
    expect((cb.onError.mock.calls[0][0] as ServiceError).code).toBe('iframe_load_error');
    expect(isOpen(iframe)).toBe(false);
    expect(cb.onCancel).not.toHaveBeenCalled();
  });

  test.each([
    ['a probe that resolves', () => Promise.resolve(new Response(null))],
    ['a probe that rejects after SERVICE_READY', () => Promise.reject(new TypeError('late'))],
  ])('%s is no error', async (_, impl) => {
    let settle: () => void = () => undefined;
    stubFetch(() => new Promise((resolve, reject) => {
      settle = () => impl().then(resolve, reject);
    }));
    const { cb, iframe } = open();
    post('SERVICE_READY');
    settle();
    await flush();
    expect(cb.onError).not.toHaveBeenCalled();
    expect(isOpen(iframe)).toBe(true);
  });
});

describe('wallet sign proxy', () => {
  const respond = (iframe: HTMLIFrameElement) => vi.spyOn(iframe.contentWindow as Window, 'postMessage');

  test('passes {method, params} to onSignRequest and posts the result to our iframe on the checkout origin', async () => {
    const { cb, iframe } = open();
    cb.onSignRequest.mockResolvedValue('0xsigned');
    const postMessage = respond(iframe);
    post('SERVICE_SIGN_REQUEST', { id: 'r1', method: 'eth_sendTransaction', params: [{ to: '0xabc' }] });
    await flush();
    expect(cb.onSignRequest).toHaveBeenCalledWith({ method: 'eth_sendTransaction', params: [{ to: '0xabc' }] });
    expect(postMessage).toHaveBeenCalledWith({ source: 'service', type: 'SERVICE_SIGN_RESPONSE', id: 'r1', result: '0xsigned' }, ORIGIN);
  });

  test.each([
    ['rejects with an Error', () => Promise.reject(new Error('User rejected')), 'User rejected'],
    ['rejects with a string', () => Promise.reject('nope'), 'nope'],
    ['throws synchronously', () => { throw new Error('boom'); }, 'boom'],
  ])('posts {id, error} when onSignRequest %s', async (_, impl, message) => {
    const { cb, iframe } = open();
    cb.onSignRequest.mockImplementation(impl as () => Promise<string>);
    const postMessage = respond(iframe);
    post('SERVICE_SIGN_REQUEST', { id: 7, method: 'personal_sign', params: ['0x68', '0xW'] });
    await flush();
    expect(postMessage).toHaveBeenCalledWith({ source: 'service', type: 'SERVICE_SIGN_RESPONSE', id: 7, error: message }, ORIGIN);
  });

  test('answers with an error when no onSignRequest was given', async () => {
    const { iframe } = open({}, { callbacks: {} });
    const postMessage = respond(iframe);
    post('SERVICE_SIGN_REQUEST', { id: 'r2', method: 'eth_sign', params: [] });
    await flush();
    expect(postMessage).toHaveBeenCalledWith(expect.objectContaining({ id: 'r2', error: expect.any(String) }), ORIGIN);
  });

  test('missing params become []', async () => {
    const { cb } = open();
    cb.onSignRequest.mockResolvedValue('0x');
    post('SERVICE_SIGN_REQUEST', { id: 'r3', method: 'eth_chainId' });
    await flush();
    expect(cb.onSignRequest).toHaveBeenCalledWith({ method: 'eth_chainId', params: [] });
  });

  test('a request from another origin is never forwarded', async () => {
    const { cb } = open();
    post('SERVICE_SIGN_REQUEST', { id: 'r4', method: 'eth_sign', params: [] }, { origin: 'https://evil.example' });
    await flush();
    expect(cb.onSignRequest).not.toHaveBeenCalled();
  });

  test('no answer is posted once the frame has closed', async () => {
    const { cb, iframe, dismiss } = open();
    let finish: (value: string) => void = () => undefined;
    cb.onSignRequest.mockImplementation(() => new Promise((resolve) => { finish = resolve; }));
    const postMessage = respond(iframe);
    post('SERVICE_SIGN_REQUEST', { id: 'r5', method: 'eth_sign', params: [] });
    dismiss();
    finish('0xlate');
    await flush();
    expect(postMessage).not.toHaveBeenCalled();
  });
});
