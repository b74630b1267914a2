// Test helpers shared by the test files: a fake hosted page talking to the SDK, and cleanup.
import { vi } from 'vitest';

export const ORIGIN = 'https://checkout.service.example';

/** The iframes the SDK has mounted, oldest first. */
export const frames = (): HTMLIFrameElement[] => Array.from(document.querySelectorAll('iframe'));

export const lastFrame = (): HTMLIFrameElement => {
  const all = frames();
  if (all.length === 0) throw new Error('no iframe mounted');
  return all[all.length - 1];
};

/** Posts as the hosted page would: from the iframe's window, on the checkout origin, unless told otherwise. */
export function post(
  type: string,
  fields: Record<string, unknown> = {},
  { frame = lastFrame(), origin = ORIGIN, source = frame.contentWindow as Window | null, envelope = 'service' } = {},
): void {
  window.dispatchEvent(new MessageEvent('message', { data: { source: envelope, type, ...fields }, origin, source }));
}

export const closeButtons = (): HTMLButtonElement[] =>
  Array.from(document.querySelectorAll<HTMLButtonElement>('button[aria-label="Close"]'));

/** Lets promise callbacks (fetch probes, sign requests, queued errors) run. */
export const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** A fetch that never settles, so no load error fires unless a test wants one. */
export const stubFetch = (impl: () => Promise<unknown> = () => new Promise(() => undefined)) => {
  const fetch = vi.fn(impl);
  vi.stubGlobal('fetch', fetch);
  return fetch;
};

/** Dismisses whatever a test left open, so module state (the popup stack, the scroll lock) starts clean. */
export function cleanup(): void {
  for (const button of closeButtons().reverse()) button.click();
  document.body.innerHTML = '';
  document.body.removeAttribute('style');
}
