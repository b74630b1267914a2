// The option types of docs/spec.md §4.3, the limits of its §8, and the validation that turns options into a plan.
import { invalid, type ServiceError } from './errors';
import { checkoutPage, pageUrl, refundRequestPage, type Mode } from './url';

export const LOCALES = ['en', 'vi', 'ja', 'ko', 'es', 'pt-BR', 'ru', 'tr', 'zh-CN', 'zh-TW'] as const;
export type Locale = (typeof LOCALES)[number];
const MODES: readonly Mode[] = ['popup', 'redirect', 'embed'];

export interface Bounds {
  min: number;
  max: number;
}
export const POPUP_WIDTH = { min: 320, max: 1280, default: 560 };
export const POPUP_HEIGHT = { min: 400, max: 1000, default: 780 };
export const EMBED_HEIGHT = { min: 200, max: 2000 };
export const DEFAULT_TIMEOUT_MS = 30000;
export const TOKEN_PATTERN = /^rfqt_[A-Za-z0-9_-]+$/;

export const clamp = (value: number, { min, max }: Bounds): number => Math.min(max, Math.max(min, value));

export interface SignRequest {
  method: string;
  params: unknown[];
}

interface CommonOptions {
  /** Default popup. */
  mode?: Mode;
  /** CSS selector or element; required in embed mode. */
  container?: string | HTMLElement;
  locale?: Locale;
  hideSummary?: boolean;
  hideHeader?: boolean;
  onCancel?: () => void;
  onError?: (error: ServiceError) => void;
}

export interface CheckoutOptions extends CommonOptions {
  /** The `session_key` from the quick-session endpoint. */
  sessionId: string;
  /** Full checkout URL from the same endpoint; built from the base URL and sessionId when omitted. */
  checkoutUrl?: string;
  /** Popup only. Default 560, clamped to 320..1280. */
  width?: number;
  /** Popup only. Default 780, clamped to 400..1000. */
  height?: number;
  /** Popup only. Default 30000; 0 disables. */
  timeoutMs?: number;
  /** Pre-connects a buyer wallet; requires onSignRequest. */
  walletAddress?: string;
  walletChainId?: number;
  onReady?: () => void;
  onSignRequest?: (request: SignRequest) => Promise<string>;
  /** A UX hint, not authoritative: fulfil on the webhook. */
  onSuccess?: (result: { sessionId: string }) => void;
}

export interface RefundRequestOptions extends CommonOptions {
  /** The `rfqt_...` token from the mint endpoint. */
  token: string;
  /** Pre-fills the destination wallet field. */
  walletAddress?: string;
  onSuccess?: (result: { linkToken: string; refundId: string }) => void;
}

/** What to open, where, and how big: everything the modes need besides the callbacks. */
export interface Plan {
  mode: Mode;
  url: string;
  container: Element | null;
  width: number;
  height: number;
  timeoutMs: number;
}

type Fields = Record<string, unknown>;

const describe = (value: unknown): string =>
  typeof value === 'string' ? JSON.stringify(value) : typeof value === 'function' ? 'a function' : String(value);

function check(where: string, o: Fields, field: string, ok: (v: unknown) => boolean, expected: string): void {
  const value = o[field];
  if (value !== undefined && !ok(value)) {
    throw invalid(`Invalid value for ${where}: ${field} should be ${expected}. You specified: ${describe(value)}.`);
  }
}

const isString = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const isNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
const isBoolean = (v: unknown): boolean => typeof v === 'boolean';
const isFunction = (v: unknown): boolean => typeof v === 'function';
const isElement = (v: unknown): boolean => typeof v === 'object' && v !== null && (v as Node).nodeType === 1;

function fields(where: string, options: unknown): Fields {
  if (typeof options !== 'object' || options === null) {
    throw invalid(`${where} expects an options object. You specified: ${describe(options)}.`);
  }
  return options as Fields;
}

function resolveContainer(where: string, container: unknown): Element {
  if (container === undefined) throw invalid(`Missing value for ${where}: container is required in embed mode.`);
  if (isElement(container)) return container as Element;
  if (!isString(container)) {
    throw invalid(`Invalid value for ${where}: container should be a CSS selector or a DOM element. You specified: ${describe(container)}.`);
  }
  let found: Element | null;
  try {
    found = document.querySelector(container as string);
  } catch {
    throw invalid(`Invalid value for ${where}: container ${describe(container)} is not a valid CSS selector.`);
  }
  if (!found) throw invalid(`Invalid value for ${where}: container ${describe(container)} matches no element.`);
  return found;
}

/** Checks the fields checkout and refund requests share, and returns the mode and the embed container. */
function common(where: string, o: Fields, callbacks: string[]): { mode: Mode; container: Element | null } {
  check(where, o, 'mode', (v) => MODES.includes(v as Mode), 'one of popup, redirect, embed');
  check(where, o, 'locale', (v) => LOCALES.includes(v as Locale), `one of ${LOCALES.join(', ')}`);
  check(where, o, 'hideSummary', isBoolean, 'a boolean');
  check(where, o, 'hideHeader', isBoolean, 'a boolean');
  check(where, o, 'walletAddress', isString, 'a non-empty string');
  for (const name of ['onCancel', 'onError', ...callbacks]) check(where, o, name, isFunction, 'a function');
  const mode = (o.mode as Mode | undefined) ?? 'popup';
  return { mode, container: mode === 'embed' ? resolveContainer(where, o.container) : null };
}

export function planCheckout(options: unknown, checkoutUrl: string): Plan {
  const where = 'checkout()';
  const o = fields(where, options);
  if (!isString(o.sessionId)) {
    throw invalid(`Invalid value for ${where}: sessionId should be the non-empty session_key string. You specified: ${describe(o.sessionId)}.`);
  }
  const origin = new URL(checkoutUrl).origin;
  const onOrigin = (v: unknown): boolean => isString(v) && /^https?:/.test(v as string) && sameOrigin(v as string, origin);
  check(where, o, 'checkoutUrl', onOrigin, `an absolute URL on the checkout origin ${origin}`);
  check(where, o, 'width', isNumber, 'a number');
  check(where, o, 'height', isNumber, 'a number');
  check(where, o, 'timeoutMs', (v) => isNumber(v) && (v as number) >= 0, 'a number of milliseconds, 0 or more');
  check(where, o, 'walletChainId', (v) => Number.isInteger(v) && (v as number) > 0, 'a positive integer');
  const { mode, container } = common(where, o, ['onReady', 'onSignRequest', 'onSuccess']);
  if (o.walletAddress !== undefined && o.onSignRequest === undefined) {
    throw invalid(`Missing value for ${where}: onSignRequest is required when walletAddress is set.`);
  }
  if (o.walletChainId !== undefined && o.walletAddress === undefined) {
    throw invalid(`Missing value for ${where}: walletChainId needs walletAddress.`);
  }
  if (o.walletAddress !== undefined && mode === 'redirect') {
    throw invalid(`Invalid value for ${where}: walletAddress needs mode popup or embed; redirect has no channel for onSignRequest.`);
  }
  const c = o as unknown as CheckoutOptions;
  return {
    mode,
    container,
    url: pageUrl(c.checkoutUrl ?? checkoutPage(checkoutUrl, c.sessionId), {
      mode,
      locale: c.locale,
      hideSummary: c.hideSummary,
      hideHeader: c.hideHeader,
      walletAddress: c.walletAddress,
      walletChainId: c.walletChainId,
    }),
    width: clamp(c.width ?? POPUP_WIDTH.default, POPUP_WIDTH),
    height: clamp(c.height ?? POPUP_HEIGHT.default, POPUP_HEIGHT),
    // docs/spec.md §4.3: the load timeout is popup only; an embed waits for its page however long it takes.
    timeoutMs: mode === 'popup' ? c.timeoutMs ?? DEFAULT_TIMEOUT_MS : 0,
  };
}

export function planRefundRequest(options: unknown, checkoutUrl: string): Plan {
  const where = 'openRefundRequest()';
  const o = fields(where, options);
  if (typeof o.token !== 'string' || !TOKEN_PATTERN.test(o.token)) {
    throw invalid(`Invalid value for ${where}: token should be a refund-request token (rfqt_...). You specified: ${describe(o.token)}.`);
  }
  const { mode, container } = common(where, o, ['onSuccess']);
  const r = o as unknown as RefundRequestOptions;
  return {
    mode,
    container,
    url: pageUrl(refundRequestPage(checkoutUrl, r.token), {
      mode,
      locale: r.locale,
      hideSummary: r.hideSummary,
      hideHeader: r.hideHeader,
      walletAddress: r.walletAddress,
    }),
    width: POPUP_WIDTH.default,
    height: POPUP_HEIGHT.default,
    timeoutMs: 0, // docs/spec.md §8: the refund-request popup has no load timeout.
  };
}

function sameOrigin(url: string, origin: string): boolean {
  try {
    return new URL(url).origin === origin;
  } catch {
    return false;
  }
}
