// One hosted page in an iframe: its postMessage channel, load failure detection and its single way to close.
import { embedHost } from './embed';
import { ServiceError, type ServiceErrorCode } from './errors';
import type { Plan, SignRequest } from './options';
import { popupHost } from './popup';

export interface FrameCallbacks<R> {
  onReady?: () => void;
  onSuccess?: (result: R) => void;
  onCancel?: () => void;
  onError?: (error: ServiceError) => void;
  onSignRequest?: (request: SignRequest) => Promise<string>;
}

export interface FrameConfig<R> {
  plan: Plan;
  /** Names the dialog and the iframe for assistive technology. */
  title: string;
  callbacks: FrameCallbacks<R>;
  /** Reads a SERVICE_SUCCESS message; undefined means malformed, and the message is ignored. */
  readSuccess: (message: Record<string, unknown>) => R | undefined;
  /** Checkout closes on success; a refund request stays open on its confirmation until dismissed. */
  closeOnSuccess: boolean;
  /** Called once when the frame is gone, whatever closed it. */
  onClosed?: () => void;
}

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);

/** Opens the frame (popup or embed) and returns its dismiss function: closes, and calls onCancel unless it succeeded. */
export function openFrame<R>(config: FrameConfig<R>): () => void {
  const { plan, callbacks } = config;
  const origin = new URL(plan.url).origin;
  let open = true;
  let ready = false;
  let succeeded = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  // Removes everything first, so a callback that opens the next frame finds the way clear.
  const close = (then?: () => void): void => {
    if (!open) return;
    open = false;
    clearTimeout(timer);
    window.removeEventListener('message', onMessage);
    host.unmount();
    config.onClosed?.();
    then?.();
  };
  const dismiss = (): void => close(succeeded ? undefined : callbacks.onCancel);
  const fail = (code: ServiceErrorCode, message: string): void =>
    close(() => callbacks.onError?.(new ServiceError(code, message)));

  const iframe = document.createElement('iframe');
  iframe.src = plan.url;
  iframe.title = config.title;
  iframe.setAttribute('allow', 'payment; clipboard-write');

  function onMessage(event: MessageEvent): void {
    // Only our own iframe, and only while it still shows the checkout origin.
    if (event.origin !== origin || event.source === null || event.source !== iframe.contentWindow) return;
    const message = event.data as Record<string, unknown> | null;
    if (typeof message !== 'object' || message === null || message.source !== 'service') return;
    switch (message.type) {
      case 'SERVICE_READY':
        if (ready) return;
        ready = true;
        clearTimeout(timer);
        callbacks.onReady?.();
        return;
      case 'SERVICE_RESIZE':
        if (isNumber(message.height)) host.resize(message.height, isNumber(message.width) ? message.width : undefined);
        return;
      case 'SERVICE_SUCCESS': {
        const result = succeeded ? undefined : config.readSuccess(message);
        if (result === undefined) return;
        succeeded = true;
        if (config.closeOnSuccess) close();
        callbacks.onSuccess?.(result);
        return;
      }
      case 'SERVICE_CANCEL':
        dismiss();
        return;
      case 'SERVICE_ERROR':
        fail('iframe_load_error', `The hosted page reported ${String(message.code)}: ${String(message.message)}`);
        return;
      case 'SERVICE_SIGN_REQUEST':
        sign(message);
    }
  }

  function sign(message: Record<string, unknown>): void {
    const { id, method, params } = message;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const target = iframe.contentWindow;
    const reply = (body: { result: string } | { error: string }): void => {
      if (open) target?.postMessage({ source: 'service', type: 'SERVICE_SIGN_RESPONSE', id, ...body }, origin);
    };
    const handler = callbacks.onSignRequest;
    if (!handler || typeof method !== 'string') {
      reply({ error: handler ? 'method should be a string' : 'No onSignRequest handler was given to the SDK' });
      return;
    }
    new Promise<string>((resolve) => resolve(handler({ method, params: Array.isArray(params) ? params : [] }))).then(
      (result) => reply({ result }),
      (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
    );
  }

  window.addEventListener('message', onMessage);
  const host =
    plan.mode === 'popup'
      ? popupHost(iframe, plan, config.title, dismiss)
      : embedHost(iframe, plan.container as Element);

  if (plan.timeoutMs > 0) {
    timer = setTimeout(
      () => fail('iframe_timeout_error', `The hosted page did not become ready within ${plan.timeoutMs} ms.`),
      plan.timeoutMs,
    );
  }
  // An iframe fires no error event when its page cannot be reached; a parallel request that
  // rejects means the network failed. A page that already said it is ready has loaded.
  if (typeof fetch === 'function') {
    fetch(plan.url, { mode: 'no-cors' }).catch(() => {
      if (open && !ready) fail('iframe_load_error', `Could not load the hosted page at ${origin}.`);
    });
  }
  return dismiss;
}
