import { afterEach, describe, expect, test, vi } from 'vitest';
import { checkoutPage, pageUrl, refundRequestPage, type PageQuery } from './url';

const PAGE = 'https://checkout.service.example/c/cs_1';

afterEach(() => vi.unstubAllGlobals());

describe('pageUrl', () => {
  // Each option a row: the query it adds, and nothing else.
  test.each<[string, PageQuery, string]>([
    ['popup alone', { mode: 'popup' }, '?sdk_mode=popup'],
    ['embed alone', { mode: 'embed' }, '?sdk_mode=embed'],
    ['locale', { mode: 'popup', locale: 'pt-BR' }, '?locale=pt-BR&sdk_mode=popup'],
    ['hideSummary', { mode: 'popup', hideSummary: true }, '?hide_summary=1&sdk_mode=popup'],
    ['hideSummary false adds nothing', { mode: 'popup', hideSummary: false }, '?sdk_mode=popup'],
    ['hideHeader', { mode: 'popup', hideHeader: true }, '?hide_header=1&sdk_mode=popup'],
    ['hideHeader false adds nothing', { mode: 'popup', hideHeader: false }, '?sdk_mode=popup'],
    ['walletAddress', { mode: 'popup', walletAddress: '0xAbC' }, '?wallet_address=0xAbC&sdk_mode=popup'],
    ['walletChainId', { mode: 'popup', walletChainId: 137 }, '?wallet_chain_id=137&sdk_mode=popup'],
    [
      'all of them',
      { mode: 'embed', locale: 'zh-TW', hideSummary: true, hideHeader: true, walletAddress: '0x1', walletChainId: 1 },
      '?locale=zh-TW&hide_summary=1&hide_header=1&wallet_address=0x1&wallet_chain_id=1&sdk_mode=embed',
    ],
  ])('%s', (_, query, expected) => {
    expect(pageUrl(PAGE, query)).toBe(PAGE + expected);
  });

  test('redirect appends return_url (the current page) and no sdk_mode', () => {
    vi.stubGlobal('location', { href: 'https://shop.example/cart?step=2#pay' });
    expect(pageUrl(PAGE, { mode: 'redirect', locale: 'ja' })).toBe(
      `${PAGE}?locale=ja&return_url=${encodeURIComponent('https://shop.example/cart?step=2#pay')}`,
    );
  });

  test('keeps a query the page URL already has', () => {
    expect(pageUrl(`${PAGE}?ref=mail`, { mode: 'popup' })).toBe(`${PAGE}?ref=mail&sdk_mode=popup`);
  });
});

describe('page paths', () => {
  test.each([
    ['cs_123', 'https://c.example/c/cs_123'],
    ['a/b?c#d', 'https://c.example/c/a%2Fb%3Fc%23d'],
  ])('checkout page for session %s', (sessionId, expected) => {
    expect(checkoutPage('https://c.example', sessionId)).toBe(expected);
  });

  test('refund-request page', () => {
    expect(refundRequestPage('https://c.example', 'rfqt_Ab-9_z')).toBe('https://c.example/refund-request/rfqt_Ab-9_z');
  });
});
