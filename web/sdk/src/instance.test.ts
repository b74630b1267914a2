import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { ServiceError } from './errors';
import { createInstance, type ServiceInstance } from './instance';
import type { CheckoutOptions, RefundRequestOptions } from './options';
import { cleanup, closeButtons, flush, frames, lastFrame, ORIGIN, post, stubFetch } from './testing';

let sdk: ServiceInstance;
let fetch: ReturnType<typeof stubFetch>;

const callbacks = () => ({ onReady: vi.fn(), onSuccess: vi.fn(), onCancel: vi.fn(), onError: vi.fn() });
const errorOf = (onError: ReturnType<typeof vi.fn>): ServiceError => onError.mock.calls[0][0] as ServiceError;

beforeEach(() => {
  fetch = stubFetch();
  sdk = createInstance(ORIGIN);
  document.body.innerHTML = '<div id="pay"></div><div id="refund"></div>';
});
afterEach(() => {
  vi.useRealTimers();
  cleanup();
});

type Way = [string, () => void];
// Every way a buyer or the merchant can dismiss an open checkout popup.
const DISMISS: Way[] = [
  ['Escape', () => document.activeElement?.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true }))],
  ['a click on the backdrop', () => (document.querySelector('[role="dialog"]')?.parentElement as HTMLElement).click()],
  ['the close button', () => closeButtons()[0].click()],
  ['sdk.close()', () => sdk.close()],
  ['SERVICE_CANCEL from the page', () => post('SERVICE_CANCEL')],
];

describe('checkout, popup mode', () => {
  test('opens the checkout page in an overlay', () => {
    sdk.checkout({ sessionId: 'cs_1' });
    expect(lastFrame().src).toBe(`${ORIGIN}/c/cs_1?sdk_mode=popup`);
    const dialog = document.querySelector('[role="dialog"]') as HTMLElement;
    expect(dialog.style.width).toBe('560px');
    expect(dialog.style.height).toBe('780px');
    expect((dialog.parentElement as HTMLElement).style.zIndex).toBe('2147483647');
    expect(fetch).toHaveBeenCalledWith(lastFrame().src, { mode: 'no-cors' });
  });

  test('uses the clamped size it was given', () => {
    sdk.checkout({ sessionId: 'cs_1', width: 10, height: 5000 });
    const dialog = document.querySelector('[role="dialog"]') as HTMLElement;
    expect([dialog.style.width, dialog.style.height]).toEqual(['320px', '1000px']);
  });

  test('throws invalid_request_error synchronously and opens nothing', () => {
    expect(() => sdk.checkout({ sessionId: '' })).toThrowError(ServiceError);
    expect(frames()).toHaveLength(0);
  });

  test.each(DISMISS)('%s closes, restores scroll and calls onCancel exactly once', (_, dismiss) => {
    document.body.style.overflow = 'clip';
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', ...cb });
    expect(document.body.style.overflow).toBe('hidden');
    dismiss();
    sdk.close();
    expect(frames()).toHaveLength(0);
    expect(document.body.style.overflow).toBe('clip');
    expect(cb.onCancel).toHaveBeenCalledTimes(1);
    expect(cb.onError).not.toHaveBeenCalled();
    expect(cb.onSuccess).not.toHaveBeenCalled();
  });

  test('SERVICE_SUCCESS calls onSuccess({sessionId}), closes without onCancel, and frees the way for the next checkout', () => {
    const cb = callbacks();
    cb.onSuccess.mockImplementation(() => sdk.checkout({ sessionId: 'cs_2', onError: cb.onError }));
    sdk.checkout({ sessionId: 'cs_1', ...cb });
    post('SERVICE_READY');
    post('SERVICE_SUCCESS', { sessionId: 'cs_1' });
    expect(cb.onReady).toHaveBeenCalledTimes(1);
    expect(cb.onSuccess).toHaveBeenCalledWith({ sessionId: 'cs_1' });
    expect(cb.onCancel).not.toHaveBeenCalled();
    expect(frames().map((f) => f.src)).toEqual([`${ORIGIN}/c/cs_2?sdk_mode=popup`]);
  });

  test('times out after timeoutMs without SERVICE_READY, closes without onCancel, and allows a new checkout', () => {
    vi.useFakeTimers();
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', timeoutMs: 2000, ...cb });
    vi.advanceTimersByTime(2000);
    expect(errorOf(cb.onError).code).toBe('iframe_timeout_error');
    expect(cb.onCancel).not.toHaveBeenCalled();
    expect(frames()).toHaveLength(0);
    sdk.checkout({ sessionId: 'cs_2' });
    expect(frames()).toHaveLength(1);
  });

  test('times out after 30 s by default', () => {
    vi.useFakeTimers();
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', ...cb });
    vi.advanceTimersByTime(29_999);
    expect(cb.onError).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(errorOf(cb.onError).code).toBe('iframe_timeout_error');
  });

  test('an unreachable page is an iframe_load_error through onError', async () => {
    fetch.mockImplementation(() => Promise.reject(new TypeError('Failed to fetch')));
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', ...cb });
    await flush();
    expect(errorOf(cb.onError).code).toBe('iframe_load_error');
    expect(cb.onCancel).not.toHaveBeenCalled();
    expect(frames()).toHaveLength(0);
  });
});

describe('only one checkout at a time', () => {
  const modes: [string, Partial<CheckoutOptions>][] = [
    ['popup', {}],
    ['embed', { mode: 'embed', container: '#pay' }],
  ];
  test.each(modes.flatMap(([first, a]) => modes.map(([second, b]) => [first, a, second, b] as const)))(
    '%s then %s: already_open_error through onError, asynchronously, nothing more opened',
    async (_, first, __, second) => {
      const a = callbacks();
      const b = callbacks();
      sdk.checkout({ sessionId: 'cs_1', ...first, ...a });
      sdk.checkout({ sessionId: 'cs_2', ...second, ...b });
      expect(b.onError).not.toHaveBeenCalled();
      await flush();
      expect(errorOf(b.onError)).toBeInstanceOf(ServiceError);
      expect(errorOf(b.onError).code).toBe('already_open_error');
      expect(frames().map((f) => f.src)).toEqual([`${ORIGIN}/c/cs_1?sdk_mode=${first.mode ?? 'popup'}`]);
      expect(a.onError).not.toHaveBeenCalled();
      expect(a.onCancel).not.toHaveBeenCalled();
    },
  );

  test('invalid arguments still throw while one is open', () => {
    sdk.checkout({ sessionId: 'cs_1' });
    expect(() => sdk.checkout({ sessionId: 'cs_2', mode: 'nope' as 'popup' })).toThrowError(/mode/);
  });

  test('after a close, the next checkout opens', () => {
    sdk.checkout({ sessionId: 'cs_1' });
    sdk.close();
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_2', ...cb });
    expect(frames()).toHaveLength(1);
    expect(cb.onError).not.toHaveBeenCalled();
  });

  test('each instance has its own checkout', () => {
    sdk.checkout({ sessionId: 'cs_1' });
    const cb = callbacks();
    createInstance(ORIGIN).checkout({ sessionId: 'cs_2', ...cb });
    expect(frames()).toHaveLength(2);
    expect(cb.onError).not.toHaveBeenCalled();
  });
});

describe('checkout, embed mode', () => {
  test('mounts in the container and sdk.close() detaches it with onCancel once', () => {
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', mode: 'embed', container: '#pay', ...cb });
    const iframe = lastFrame();
    expect(iframe.parentElement?.id).toBe('pay');
    expect(iframe.src).toBe(`${ORIGIN}/c/cs_1?sdk_mode=embed`);
    expect(document.body.style.overflow).toBe('');
    sdk.close();
    sdk.close();
    expect(iframe.isConnected).toBe(false);
    expect(cb.onCancel).toHaveBeenCalledTimes(1);
  });

  test('has no load timeout', () => {
    vi.useFakeTimers();
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', mode: 'embed', container: '#pay', timeoutMs: 10, ...cb });
    vi.advanceTimersByTime(60_000);
    expect(cb.onError).not.toHaveBeenCalled();
    expect(frames()).toHaveLength(1);
  });

  test('SERVICE_ERROR detaches it and reports iframe_load_error', () => {
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', mode: 'embed', container: document.getElementById('pay') as HTMLElement, ...cb });
    post('SERVICE_ERROR', { code: 'expired', message: 'Session expired' });
    expect(errorOf(cb.onError).code).toBe('iframe_load_error');
    expect(frames()).toHaveLength(0);
    expect(cb.onCancel).not.toHaveBeenCalled();
  });

  test('wires onSignRequest when a wallet is pre-connected', async () => {
    const onSignRequest = vi.fn(async () => '0xsig');
    sdk.checkout({ sessionId: 'cs_1', mode: 'embed', container: '#pay', walletAddress: '0xW', walletChainId: 10, onSignRequest });
    const postMessage = vi.spyOn(lastFrame().contentWindow as Window, 'postMessage');
    post('SERVICE_SIGN_REQUEST', { id: 'a', method: 'eth_signTypedData_v4', params: ['0xW', '{}'] });
    await flush();
    expect(onSignRequest).toHaveBeenCalledWith({ method: 'eth_signTypedData_v4', params: ['0xW', '{}'] });
    expect(postMessage).toHaveBeenCalledWith({ source: 'service', type: 'SERVICE_SIGN_RESPONSE', id: 'a', result: '0xsig' }, ORIGIN);
  });
});

describe('redirect mode', () => {
  beforeEach(() => {
    vi.stubGlobal('location', { href: 'https://shop.example/cart' });
  });

  test('checkout navigates with return_url and opens nothing', () => {
    const cb = callbacks();
    sdk.checkout({ sessionId: 'cs_1', mode: 'redirect', locale: 'ko', ...cb });
    expect(window.location.href).toBe(`${ORIGIN}/c/cs_1?locale=ko&return_url=${encodeURIComponent('https://shop.example/cart')}`);
    expect(frames()).toHaveLength(0);
    expect(fetch).not.toHaveBeenCalled();
    sdk.close();
    expect(cb.onCancel).not.toHaveBeenCalled();
  });

  test('openRefundRequest navigates and returns a close() that does nothing', () => {
    const cb = callbacks();
    const close = sdk.openRefundRequest({ token: 'rfqt_9', mode: 'redirect', ...cb });
    expect(window.location.href).toBe(`${ORIGIN}/refund-request/rfqt_9?return_url=${encodeURIComponent('https://shop.example/cart')}`);
    close();
    expect(cb.onCancel).not.toHaveBeenCalled();
  });
});

describe('openRefundRequest', () => {
  const refund = (token: string, extra: Partial<RefundRequestOptions> = {}) => {
    const cb = callbacks();
    const close = sdk.openRefundRequest({ token, ...cb, ...extra });
    return { cb, close, iframe: lastFrame() };
  };

  test.each([
    ['no options', undefined],
    ['a bad token', { token: 'rfq_1' }],
    ['a bad mode', { token: 'rfqt_1', mode: 'x' }],
  ])('throws only invalid_request_error, synchronously, for %s', (_, options) => {
    const onError = vi.fn();
    let thrown: unknown;
    try {
      sdk.openRefundRequest({ onError, ...(options as object) } as unknown as RefundRequestOptions);
    } catch (error) {
      thrown = error;
    }
    expect((thrown as ServiceError).code).toBe('invalid_request_error');
    expect(onError).not.toHaveBeenCalled();
  });

  test('several popups open at once, each its own overlay; each close() dismisses its own', () => {
    const a = refund('rfqt_a');
    const b = refund('rfqt_b', { locale: 'tr' });
    expect(document.querySelectorAll('[role="dialog"]')).toHaveLength(2);
    expect(frames().map((f) => f.src)).toEqual([
      `${ORIGIN}/refund-request/rfqt_a?sdk_mode=popup`,
      `${ORIGIN}/refund-request/rfqt_b?locale=tr&sdk_mode=popup`,
    ]);
    expect(a.cb.onError).not.toHaveBeenCalled();
    expect(b.cb.onError).not.toHaveBeenCalled();
    a.close();
    expect(a.iframe.isConnected).toBe(false);
    expect(b.iframe.isConnected).toBe(true);
    expect(a.cb.onCancel).toHaveBeenCalledTimes(1);
    expect(b.cb.onCancel).not.toHaveBeenCalled();
    expect(document.body.style.overflow).toBe('hidden');
    b.close();
    expect(document.body.style.overflow).toBe('');
  });

  test('can open beside a checkout, and sdk.close() closes only the checkout', () => {
    sdk.checkout({ sessionId: 'cs_1' });
    const r = refund('rfqt_a');
    expect(r.cb.onError).not.toHaveBeenCalled();
    sdk.close();
    expect(frames()).toEqual([r.iframe]);
  });

  test('messages reach only the popup they come from', () => {
    const a = refund('rfqt_a');
    const b = refund('rfqt_b');
    post('SERVICE_SUCCESS', { linkToken: 'lt_b', refundId: 'rf_b' }, { frame: b.iframe });
    expect(b.cb.onSuccess).toHaveBeenCalledWith({ linkToken: 'lt_b', refundId: 'rf_b' });
    expect(a.cb.onSuccess).not.toHaveBeenCalled();
  });

  test('after SERVICE_SUCCESS it stays open on the confirmation, and closing it calls no onCancel', () => {
    const r = refund('rfqt_a');
    post('SERVICE_SUCCESS', { linkToken: 'lt_1', refundId: 'rf_1' });
    expect(r.cb.onSuccess).toHaveBeenCalledWith({ linkToken: 'lt_1', refundId: 'rf_1' });
    expect(r.iframe.isConnected).toBe(true);
    closeButtons()[0].click();
    expect(r.iframe.isConnected).toBe(false);
    expect(r.cb.onCancel).not.toHaveBeenCalled();
  });

  test.each([
    ['no refundId', { linkToken: 'lt_1' }],
    ['no linkToken', { refundId: 'rf_1' }],
    ['empty strings', { linkToken: '', refundId: '' }],
    ['numbers', { linkToken: 1, refundId: 2 }],
  ])('a SERVICE_SUCCESS with %s is ignored', (_, fields) => {
    const r = refund('rfqt_a');
    post('SERVICE_SUCCESS', fields);
    expect(r.cb.onSuccess).not.toHaveBeenCalled();
  });

  test('has no load timeout', () => {
    vi.useFakeTimers();
    const r = refund('rfqt_a');
    vi.advanceTimersByTime(10 * 60_000);
    expect(r.cb.onError).not.toHaveBeenCalled();
    expect(r.iframe.isConnected).toBe(true);
  });

  test('an unreachable page is an iframe_load_error, asynchronously, closed without onCancel', async () => {
    fetch.mockImplementation(() => Promise.reject(new TypeError('Failed to fetch')));
    const r = refund('rfqt_a');
    expect(r.cb.onError).not.toHaveBeenCalled();
    await flush();
    expect(errorOf(r.cb.onError).code).toBe('iframe_load_error');
    expect(r.iframe.isConnected).toBe(false);
    expect(r.cb.onCancel).not.toHaveBeenCalled();
  });

  test('embed: mounts in its container and close() detaches it with onCancel', () => {
    const r = refund('rfqt_a', { mode: 'embed', container: '#refund', walletAddress: 'So1ana' });
    expect(r.iframe.parentElement?.id).toBe('refund');
    expect(r.iframe.src).toBe(`${ORIGIN}/refund-request/rfqt_a?wallet_address=So1ana&sdk_mode=embed`);
    r.close();
    r.close();
    expect(r.iframe.isConnected).toBe(false);
    expect(r.cb.onCancel).toHaveBeenCalledTimes(1);
  });
});
