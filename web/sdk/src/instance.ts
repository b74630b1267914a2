// The object loadService resolves to: checkout, close and openRefundRequest on one checkout origin.
import { ServiceError } from './errors';
import { openFrame } from './frame';
import { planCheckout, planRefundRequest, type CheckoutOptions, type RefundRequestOptions } from './options';

export interface ServiceInstance {
  /** Opens hosted checkout. Throws ServiceError('invalid_request_error') on bad arguments. */
  checkout(options: CheckoutOptions): void;
  /** Dismisses the open checkout popup or embed (calling onCancel); does nothing in redirect mode. */
  close(): void;
  /** Opens the hosted refund-request form; the returned function dismisses that popup or embed. */
  openRefundRequest(options: RefundRequestOptions): () => void;
}

const readRefund = (message: Record<string, unknown>): { linkToken: string; refundId: string } | undefined => {
  const { linkToken, refundId } = message;
  return typeof linkToken === 'string' && linkToken && typeof refundId === 'string' && refundId
    ? { linkToken, refundId }
    : undefined;
};

const noop = (): void => undefined;

export function createInstance(checkoutUrl: string): ServiceInstance {
  let dismissCheckout: (() => void) | null = null;

  return {
    checkout(options) {
      const plan = planCheckout(options, checkoutUrl);
      if (plan.mode === 'redirect') {
        window.location.href = plan.url;
        return;
      }
      if (dismissCheckout) {
        const error = new ServiceError('already_open_error', 'Another checkout is already open. Call sdk.close() first.');
        // Like every runtime error, it arrives after checkout() has returned.
        queueMicrotask(() => options.onError?.(error));
        return;
      }
      dismissCheckout = openFrame({
        plan,
        title: 'Checkout',
        callbacks: options,
        readSuccess: () => ({ sessionId: options.sessionId }),
        closeOnSuccess: true,
        onClosed: () => {
          dismissCheckout = null;
        },
      });
    },

    close() {
      dismissCheckout?.();
    },

    openRefundRequest(options) {
      const plan = planRefundRequest(options, checkoutUrl);
      if (plan.mode === 'redirect') {
        window.location.href = plan.url;
        return noop;
      }
      return openFrame({ plan, title: 'Refund request', callbacks: options, readSuccess: readRefund, closeOnSuccess: false });
    },
  };
}
