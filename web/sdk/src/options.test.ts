import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ServiceError } from './errors';
import { clamp, DEFAULT_TIMEOUT_MS, LOCALES, planCheckout, planRefundRequest, POPUP_HEIGHT, POPUP_WIDTH } from './options';

const BASE = 'https://checkout.service.example';
const fn = (): void => undefined;
const signer = async (): Promise<string> => '0xsigned';

beforeEach(() => {
  document.body.innerHTML = '<div id="pay"></div>';
});
afterEach(() => {
  document.body.innerHTML = '';
});

const expectInvalid = (run: () => unknown, message: string | RegExp): void => {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ServiceError);
  expect((thrown as ServiceError).code).toBe('invalid_request_error');
  expect((thrown as ServiceError).message).toMatch(message);
};

// Every invalid checkout input is a row: [what, options, what the message names].
const INVALID_CHECKOUT: [string, unknown, string | RegExp][] = [
  ['no options', undefined, 'expects an options object'],
  ['null options', null, 'expects an options object'],
  ['a string for options', 'cs_1', 'expects an options object'],
  ['missing sessionId', {}, 'sessionId'],
  ['empty sessionId', { sessionId: '' }, 'sessionId'],
  ['numeric sessionId', { sessionId: 42 }, 'sessionId'],
  ['bad mode', { sessionId: 'cs_1', mode: 'modal' }, 'mode should be one of popup, redirect, embed'],
  ['embed without container', { sessionId: 'cs_1', mode: 'embed' }, 'container is required in embed mode'],
  ['embed, selector matching nothing', { sessionId: 'cs_1', mode: 'embed', container: '#missing' }, 'matches no element'],
  ['embed, invalid selector', { sessionId: 'cs_1', mode: 'embed', container: '##' }, 'not a valid CSS selector'],
  ['embed, container a number', { sessionId: 'cs_1', mode: 'embed', container: 7 }, 'container should be a CSS selector'],
  ['embed, container a text node', { sessionId: 'cs_1', mode: 'embed', container: document.createTextNode('x') }, 'container'],
  ['walletAddress without onSignRequest', { sessionId: 'cs_1', walletAddress: '0xabc' }, 'onSignRequest is required'],
  ['walletAddress empty', { sessionId: 'cs_1', walletAddress: '', onSignRequest: signer }, 'walletAddress'],
  ['walletAddress in redirect mode', { sessionId: 'cs_1', mode: 'redirect', walletAddress: '0xabc', onSignRequest: signer }, 'redirect'],
  ['walletChainId without walletAddress', { sessionId: 'cs_1', walletChainId: 1 }, 'walletChainId needs walletAddress'],
  ['walletChainId not an integer', { sessionId: 'cs_1', walletAddress: '0xa', onSignRequest: signer, walletChainId: 1.5 }, 'walletChainId'],
  ['walletChainId zero', { sessionId: 'cs_1', walletAddress: '0xa', onSignRequest: signer, walletChainId: 0 }, 'walletChainId'],
  ['walletChainId a string', { sessionId: 'cs_1', walletAddress: '0xa', onSignRequest: signer, walletChainId: '1' }, 'walletChainId'],
  ['onReady not a function', { sessionId: 'cs_1', onReady: 'ready' }, 'onReady should be a function'],
  ['onSignRequest not a function', { sessionId: 'cs_1', onSignRequest: {} }, 'onSignRequest should be a function'],
  ['onSuccess not a function', { sessionId: 'cs_1', onSuccess: true }, 'onSuccess should be a function'],
  ['onCancel not a function', { sessionId: 'cs_1', onCancel: 1 }, 'onCancel should be a function'],
  ['onError not a function', { sessionId: 'cs_1', onError: null }, 'onError should be a function'],
  ['unknown locale', { sessionId: 'cs_1', locale: 'fr' }, 'locale should be one of en, vi, ja, ko, es, pt-BR, ru, tr, zh-CN, zh-TW'],
  ['locale in the wrong case', { sessionId: 'cs_1', locale: 'pt-br' }, 'locale'],
  ['width not a number', { sessionId: 'cs_1', width: '600' }, 'width should be a number'],
  ['width NaN', { sessionId: 'cs_1', width: NaN }, 'width'],
  ['height infinite', { sessionId: 'cs_1', height: Infinity }, 'height should be a number'],
  ['timeoutMs negative', { sessionId: 'cs_1', timeoutMs: -1 }, 'timeoutMs'],
  ['timeoutMs a string', { sessionId: 'cs_1', timeoutMs: '30000' }, 'timeoutMs'],
  ['hideSummary not a boolean', { sessionId: 'cs_1', hideSummary: 'yes' }, 'hideSummary should be a boolean'],
  ['hideHeader not a boolean', { sessionId: 'cs_1', hideHeader: 1 }, 'hideHeader should be a boolean'],
  ['checkoutUrl not a URL', { sessionId: 'cs_1', checkoutUrl: 'c/cs_1' }, 'checkoutUrl'],
  ['checkoutUrl on another origin', { sessionId: 'cs_1', checkoutUrl: 'https://evil.example/c/cs_1' }, 'checkout origin'],
  ['checkoutUrl javascript:', { sessionId: 'cs_1', checkoutUrl: 'javascript:alert(1)' }, 'checkoutUrl'],
];

describe('planCheckout rejects', () => {
  test.each(INVALID_CHECKOUT)('%s', (_, options, message) => {
    expectInvalid(() => planCheckout(options, BASE), message);
  });
});

// Every invalid refund-request input is a row.
const INVALID_REFUND: [string, unknown, string | RegExp][] = [
  ['no options', undefined, 'expects an options object'],
  ['missing token', {}, 'token'],
  ['token without prefix', { token: 'abc' }, 'rfqt_'],
  ['empty token body', { token: 'rfqt_' }, 'token'],
  ['token with a slash', { token: 'rfqt_a/b' }, 'token'],
  ['token with a space', { token: 'rfqt_a b' }, 'token'],
  ['token a number', { token: 12 }, 'token'],
  ['bad mode', { token: 'rfqt_1', mode: 'window' }, 'mode'],
  ['embed without container', { token: 'rfqt_1', mode: 'embed' }, 'container is required'],
  ['embed, selector matching nothing', { token: 'rfqt_1', mode: 'embed', container: '.nope' }, 'matches no element'],
  ['unknown locale', { token: 'rfqt_1', locale: 'de' }, 'locale'],
  ['walletAddress empty', { token: 'rfqt_1', walletAddress: '' }, 'walletAddress'],
  ['hideSummary not a boolean', { token: 'rfqt_1', hideSummary: 'true' }, 'hideSummary'],
  ['hideHeader not a boolean', { token: 'rfqt_1', hideHeader: 0 }, 'hideHeader'],
  ['onSuccess not a function', { token: 'rfqt_1', onSuccess: 'x' }, 'onSuccess'],
  ['onCancel not a function', { token: 'rfqt_1', onCancel: 'x' }, 'onCancel'],
  ['onError not a function', { token: 'rfqt_1', onError: 'x' }, 'onError'],
];

describe('planRefundRequest rejects', () => {
  test.each(INVALID_REFUND)('%s', (_, options, message) => {
    expectInvalid(() => planRefundRequest(options, BASE), message);
  });
});

describe('clamp', () => {
  // Each bound a row: below, at, inside and above.
  test.each([
    ['width', POPUP_WIDTH, 100, 320],
    ['width', POPUP_WIDTH, 320, 320],
    ['width', POPUP_WIDTH, 800, 800],
    ['width', POPUP_WIDTH, 1280, 1280],
    ['width', POPUP_WIDTH, 5000, 1280],
    ['height', POPUP_HEIGHT, 0, 400],
    ['height', POPUP_HEIGHT, 400, 400],
    ['height', POPUP_HEIGHT, 999, 999],
    ['height', POPUP_HEIGHT, 1000, 1000],
    ['height', POPUP_HEIGHT, 1001, 1000],
  ])('%s %#: %d -> %d', (_, bounds, value, expected) => {
    expect(clamp(value as number, bounds)).toBe(expected);
  });
});

describe('planCheckout', () => {
  test('defaults: popup, 560x780, 30 s timeout, the built URL', () => {
    expect(planCheckout({ sessionId: 'cs 1' }, BASE)).toEqual({
      mode: 'popup',
      container: null,
      url: `${BASE}/c/cs%201?sdk_mode=popup`,
      width: 560,
      height: 780,
      timeoutMs: DEFAULT_TIMEOUT_MS,
    });
    expect(DEFAULT_TIMEOUT_MS).toBe(30000);
  });

  test.each([
    [{ width: 100 }, 320, 780],
    [{ width: 2000 }, 1280, 780],
    [{ width: 700 }, 700, 780],
    [{ height: 10 }, 560, 400],
    [{ height: 4000 }, 560, 1000],
    [{ height: 650 }, 560, 650],
  ])('popup size %o -> %dx%d', (size, width, height) => {
    const plan = planCheckout({ sessionId: 'cs_1', ...size }, BASE);
    expect([plan.width, plan.height]).toEqual([width, height]);
  });

  test.each([
    ['popup default', {}, 30000],
    ['popup custom', { timeoutMs: 5000 }, 5000],
    ['popup disabled', { timeoutMs: 0 }, 0],
    ['embed never times out', { mode: 'embed', container: '#pay', timeoutMs: 5000 }, 0],
    ['redirect has none', { mode: 'redirect' }, 0],
  ])('timeout: %s', (_, options, expected) => {
    expect(planCheckout({ sessionId: 'cs_1', ...options }, BASE).timeoutMs).toBe(expected);
  });

  test.each(LOCALES)('accepts locale %s and forwards it', (locale) => {
    expect(planCheckout({ sessionId: 'cs_1', locale }, BASE).url).toBe(`${BASE}/c/cs_1?locale=${locale}&sdk_mode=popup`);
  });

  test('a full checkoutUrl replaces the built one', () => {
    const plan = planCheckout({ sessionId: 'cs_1', checkoutUrl: `${BASE}/c/other?x=1`, hideHeader: true }, BASE);
    expect(plan.url).toBe(`${BASE}/c/other?x=1&hide_header=1&sdk_mode=popup`);
  });

  test('every checkout option reaches the URL', () => {
    const plan = planCheckout(
      { sessionId: 'cs_1', mode: 'embed', container: '#pay', locale: 'vi', hideSummary: true, hideHeader: true,
        walletAddress: '0xW', walletChainId: 8453, onSignRequest: signer, onReady: fn },
      BASE,
    );
    expect(plan.url).toBe(`${BASE}/c/cs_1?locale=vi&hide_summary=1&hide_header=1&wallet_address=0xW&wallet_chain_id=8453&sdk_mode=embed`);
  });

  test.each([
    ['a selector', '#pay'],
    ['an element', 'element'],
  ])('embed container given as %s resolves to the element', (_, container) => {
    const element = document.getElementById('pay') as HTMLElement;
    const plan = planCheckout({ sessionId: 'cs_1', mode: 'embed', container: container === 'element' ? element : container }, BASE);
    expect(plan.container).toBe(element);
  });

  test('the container is ignored outside embed mode', () => {
    expect(planCheckout({ sessionId: 'cs_1', container: '#missing' }, BASE).container).toBeNull();
  });
});

describe('planRefundRequest', () => {
  test('builds the refund-request URL with its options and no timeout', () => {
    const plan = planRefundRequest(
      { token: 'rfqt_A-b_9', locale: 'es', hideSummary: true, hideHeader: true, walletAddress: 'T9yD' },
      BASE,
    );
    expect(plan).toEqual({
      mode: 'popup',
      container: null,
      url: `${BASE}/refund-request/rfqt_A-b_9?locale=es&hide_summary=1&hide_header=1&wallet_address=T9yD&sdk_mode=popup`,
      width: 560,
      height: 780,
      timeoutMs: 0,
    });
  });

  test('does not forward checkout-only fields', () => {
    const options = { token: 'rfqt_1', walletChainId: 1 } as unknown;
    expect(planRefundRequest(options, BASE).url).toBe(`${BASE}/refund-request/rfqt_1?sdk_mode=popup`);
  });
});
