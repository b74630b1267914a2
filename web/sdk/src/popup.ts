// The popup mode: a modal overlay holding the iframe, with scroll lock, focus trap and the ways to dismiss it.
import { clamp, POPUP_HEIGHT, POPUP_WIDTH } from './options';

export interface Host {
  resize(height: number, width?: number): void;
  unmount(): void;
}

// Several refund-request popups may be open at once: only the topmost takes the keyboard,
// and the body's overflow is saved by the first and restored by the last to close.
const stack: HTMLElement[] = [];
let savedOverflow = '';

const css = (el: HTMLElement, style: Record<string, string>): void => {
  Object.assign(el.style, style);
};

export function popupHost(
  iframe: HTMLIFrameElement,
  size: { width: number; height: number },
  title: string,
  dismiss: () => void,
): Host {
  const overlay = document.createElement('div');
  css(overlay, {
    position: 'fixed', top: '0', right: '0', bottom: '0', left: '0', zIndex: '2147483647',
    display: 'flex', alignItems: 'center', justifyContent: 'center', background: 'rgba(0, 0, 0, 0.6)',
  });
  const dialog = document.createElement('div');
  dialog.setAttribute('role', 'dialog');
  dialog.setAttribute('aria-modal', 'true');
  dialog.setAttribute('aria-label', title);
  css(dialog, {
    position: 'relative', width: `${size.width}px`, height: `${size.height}px`, maxWidth: '100vw',
    maxHeight: '100vh', background: '#fff', borderRadius: '8px', overflow: 'hidden',
    boxShadow: '0 12px 48px rgba(0, 0, 0, 0.35)',
  });
  const closeButton = document.createElement('button');
  closeButton.type = 'button';
  closeButton.setAttribute('aria-label', 'Close');
  closeButton.textContent = '\u00d7';
  css(closeButton, {
    position: 'absolute', top: '8px', right: '8px', zIndex: '1', width: '32px', height: '32px', padding: '0',
    border: '0', borderRadius: '50%', background: 'rgba(0, 0, 0, 0.55)', color: '#fff', font: '20px/32px sans-serif',
    cursor: 'pointer',
  });
  css(iframe, { display: 'block', width: '100%', height: '100%', border: '0' });
  // Tabbing out of the iframe's last field lands here and wraps to the close button.
  const sentinel = document.createElement('span');
  sentinel.tabIndex = 0;
  dialog.append(closeButton, iframe, sentinel);
  overlay.append(dialog);

  const focusables: HTMLElement[] = [closeButton, iframe];
  const onKey = (event: KeyboardEvent): void => {
    if (stack[stack.length - 1] !== overlay) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      dismiss();
    } else if (event.key === 'Tab') {
      event.preventDefault();
      const i = focusables.indexOf(document.activeElement as HTMLElement);
      const step = event.shiftKey ? -1 : 1;
      const next = i === -1 ? 0 : (i + step + focusables.length) % focusables.length;
      focusables[next].focus();
    }
  };
  closeButton.addEventListener('click', dismiss);
  overlay.addEventListener('click', (event) => {
    if (event.target === overlay) dismiss();
  });
  sentinel.addEventListener('focus', () => closeButton.focus());

  const previousFocus = document.activeElement as HTMLElement | null;
  if (stack.length === 0) {
    savedOverflow = document.body.style.overflow;
    document.body.style.overflow = 'hidden';
  }
  stack.push(overlay);
  document.addEventListener('keydown', onKey, true);
  document.body.append(overlay);
  closeButton.focus();

  return {
    resize(height, width) {
      dialog.style.height = `${clamp(height, POPUP_HEIGHT)}px`;
      if (width !== undefined) dialog.style.width = `${clamp(width, POPUP_WIDTH)}px`;
    },
    unmount() {
      const at = stack.indexOf(overlay);
      if (at === -1) return;
      const wasTopmost = at === stack.length - 1;
      stack.splice(at, 1);
      document.removeEventListener('keydown', onKey, true);
      overlay.remove();
      if (stack.length === 0) document.body.style.overflow = savedOverflow;
      // Focus goes back where it was, unless another popup still sits on top and holds it.
      if (wasTopmost && previousFocus?.isConnected) previousFocus.focus();
    },
  };
}
