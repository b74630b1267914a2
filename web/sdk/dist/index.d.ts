type ServiceErrorCode = 'invalid_request_error' | 'iframe_load_error' | 'iframe_timeout_error' | 'already_open_error' | 'network_error' | 'api_error';
declare class ServiceError extends Error {
    readonly code: ServiceErrorCode;
    constructor(code: ServiceErrorCode, message: string);
}

type Mode = 'popup' | 'redirect' | 'embed';

declare const LOCALES: readonly ["en", "vi", "ja", "ko", "es", "pt-BR", "ru", "tr", "zh-CN", "zh-TW"];
type Locale = (typeof LOCALES)[number];
interface SignRequest {
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
interface CheckoutOptions extends CommonOptions {
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
    onSuccess?: (result: {
        sessionId: string;
    }) => void;
}
interface RefundRequestOptions extends CommonOptions {
    /** The `rfqt_...` token from the mint endpoint. */
    token: string;
    /** Pre-fills the destination wallet field. */
    walletAddress?: string;
    onSuccess?: (result: {
        linkToken: string;
        refundId: string;
    }) => void;
}

interface ServiceInstance {
    /** Opens hosted checkout. Throws ServiceError('invalid_request_error') on bad arguments. */
    checkout(options: CheckoutOptions): void;
    /** Dismisses the open checkout popup or embed (calling onCancel); does nothing in redirect mode. */
    close(): void;
    /** Opens the hosted refund-request form; the returned function dismisses that popup or embed. */
    openRefundRequest(options: RefundRequestOptions): () => void;
}

interface LoadOptions {
    /** Overrides the checkout base URL (default: the production checkout origin). */
    checkoutUrl?: string;
}
declare function loadService(publicKey: string, options?: LoadOptions): Promise<ServiceInstance>;

/** The SDK's own version (docs/spec.md §9). */
declare const VERSION = "0.1.1-beta.17";

export { type CheckoutOptions, type LoadOptions, type RefundRequestOptions, ServiceError, type ServiceErrorCode, type ServiceInstance, VERSION, loadService };
