// Hosted-page URLs: the page address plus only the query parameters that are set.

export type Mode = 'popup' | 'redirect' | 'embed';

export interface PageQuery {
  mode: Mode;
  locale?: string;
  hideSummary?: boolean;
  hideHeader?: boolean;
  walletAddress?: string;
  walletChainId?: number;
}

export const checkoutPage = (checkoutUrl: string, sessionId: string): string =>
  `${checkoutUrl}/c/${encodeURIComponent(sessionId)}`;

export const refundRequestPage = (checkoutUrl: string, token: string): string =>
  `${checkoutUrl}/refund-request/${encodeURIComponent(token)}`;

export function pageUrl(page: string, query: PageQuery): string {
  const url = new URL(page);
  const set = (name: string, value: string | undefined): void => {
    if (value !== undefined) url.searchParams.set(name, value);
  };
  set('locale', query.locale);
  set('hide_summary', query.hideSummary ? '1' : undefined);
  set('hide_header', query.hideHeader ? '1' : undefined);
  set('wallet_address', query.walletAddress);
  set('wallet_chain_id', query.walletChainId === undefined ? undefined : String(query.walletChainId));
  // A framed page learns it is framed from sdk_mode; a redirected one learns where to come back to.
  if (query.mode === 'redirect') set('return_url', window.location.href);
  else set('sdk_mode', query.mode);
  return url.toString();
}
