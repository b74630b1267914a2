import { afterEach, describe, expect, test, vi } from 'vitest';
import { popupHost } from './popup';
import { cleanup } from './testing';

const SIZE = { width: 600, height: 700 };

const opened: { unmount(): void }[] = [];

function open(dismiss = vi.fn()) {
  const iframe = document.createElement('iframe');
  const host = popupHost(iframe, SIZE, 'Checkout', dismiss);
  opened.push(host);
  const dialog = iframe.parentElement as HTMLElement;
  const overlay = dialog.parentElement as HTMLElement;
  const closeButton = dialog.querySelector('button') as HTMLButtonElement;
  return { iframe, host, dialog, overlay, closeButton, dismiss };
}

const key = (key: string, shiftKey = false): KeyboardEvent => {
  const event = new KeyboardEvent('keydown', { key, shiftKey, bubbles: true, cancelable: true });
  (document.activeElement ?? document.body).dispatchEvent(event);
  return event;
};

afterEach(() => {
  opened.splice(0).forEach((host) => host.unmount());
  cleanup();
});

describe('popup overlay', () => {
  test('is a fixed full-screen dark backdrop on top of everything', () => {
    const { overlay } = open();
    expect(overlay.parentElement).toBe(document.body);
    expect(overlay.style.position).toBe('fixed');
    expect(overlay.style.zIndex).toBe('2147483647');
    expect(overlay.style.background).toMatch(/rgba\(0, 0, 0, 0\.\d+\)/);
    expect(overlay.style.display).toBe('flex');
    expect(overlay.style.alignItems).toBe('center');
    expect(overlay.style.justifyContent).toBe('center');
  });

  test('holds a modal dialog of the given size, capped to the viewport', () => {
    const { dialog, iframe } = open();
    expect(dialog.getAttribute('role')).toBe('dialog');
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    expect(dialog.getAttribute('aria-label')).toBe('Checkout');
    expect(dialog.style.width).toBe('600px');
    expect(dialog.style.height).toBe('700px');
    expect(dialog.style.maxWidth).toBe('100vw');
    expect(dialog.style.maxHeight).toBe('100vh');
    expect(iframe.style.width).toBe('100%');
    expect(iframe.style.height).toBe('100%');
  });

  test('has a close button labelled Close that takes the initial focus', () => {
    const { closeButton } = open();
    expect(closeButton.getAttribute('aria-label')).toBe('Close');
    expect(closeButton.type).toBe('button');
    expect(document.activeElement).toBe(closeButton);
  });

  test('locks body scroll and restores the previous value on close', () => {
    document.body.style.overflow = 'scroll';
    const { host } = open();
    expect(document.body.style.overflow).toBe('hidden');
    host.unmount();
    expect(document.body.style.overflow).toBe('scroll');
  });

  test('removes itself and gives focus back on unmount', () => {
    const before = document.createElement('button');
    document.body.append(before);
    before.focus();
    const { host, overlay } = open();
    host.unmount();
    expect(overlay.isConnected).toBe(false);
    expect(document.activeElement).toBe(before);
  });
});

describe('popup dismissal', () => {
  test.each([
    ['Escape', () => key('Escape')],
    ['a click on the backdrop', (p: ReturnType<typeof open>) => p.overlay.click()],
    ['the close button', (p: ReturnType<typeof open>) => p.closeButton.click()],
  ])('%s dismisses once', (_, act) => {
    const p = open();
    act(p);
    expect(p.dismiss).toHaveBeenCalledTimes(1);
  });

  test.each([
    ['a click inside the dialog', (p: ReturnType<typeof open>) => p.dialog.click()],
    ['a click on the iframe', (p: ReturnType<typeof open>) => p.iframe.click()],
    ['another key', () => key('Enter')],
  ])('%s does not dismiss', (_, act) => {
    const p = open();
    act(p as ReturnType<typeof open>);
    expect(p.dismiss).not.toHaveBeenCalled();
  });

  test('Escape after unmount does nothing', () => {
    const p = open();
    p.host.unmount();
    key('Escape');
    expect(p.dismiss).not.toHaveBeenCalled();
  });

  test('a second unmount leaves the other popups alone', () => {
    document.body.style.overflow = 'auto';
    const first = open();
    const second = open();
    second.host.unmount();
    second.host.unmount();
    expect(document.body.style.overflow).toBe('hidden');
    key('Escape');
    expect(first.dismiss).toHaveBeenCalledTimes(1);
  });
});

describe('popup focus trap', () => {
  test.each([
    ['Tab from the close button goes to the iframe', 'close', false, 'iframe'],
    ['Shift+Tab from the close button wraps to the iframe', 'close', true, 'iframe'],
    ['Tab from the iframe wraps to the close button', 'iframe', false, 'close'],
    ['Shift+Tab from the iframe goes to the close button', 'iframe', true, 'close'],
    ['Tab from outside the dialog comes back to the close button', 'outside', false, 'close'],
    ['Shift+Tab from outside the dialog comes back to the close button', 'outside', true, 'close'],
  ])('%s', (_, from, shift, to) => {
    const outside = document.createElement('input');
    document.body.prepend(outside);
    const p = open();
    const at = { close: p.closeButton, iframe: p.iframe, outside }[from as 'close'];
    at.focus();
    const event = key('Tab', shift as boolean);
    expect(event.defaultPrevented).toBe(true);
    expect(document.activeElement).toBe(to === 'close' ? p.closeButton : p.iframe);
  });

  test('tabbing out of the iframe content lands on the sentinel and wraps to the close button', () => {
    const p = open();
    const sentinel = p.dialog.lastElementChild as HTMLElement;
    expect(sentinel.tabIndex).toBe(0);
    sentinel.focus();
    expect(document.activeElement).toBe(p.closeButton);
  });
});

describe('popup resize', () => {
  test.each([
    [{ height: 100 }, '600px', '400px'],
    [{ height: 400 }, '600px', '400px'],
    [{ height: 850 }, '600px', '850px'],
    [{ height: 1000 }, '600px', '1000px'],
    [{ height: 3000 }, '600px', '1000px'],
    [{ height: 500, width: 10 }, '320px', '500px'],
    [{ height: 500, width: 320 }, '320px', '500px'],
    [{ height: 500, width: 900 }, '900px', '500px'],
    [{ height: 500, width: 1280 }, '1280px', '500px'],
    [{ height: 500, width: 9999 }, '1280px', '500px'],
  ])('%o -> %s x %s', (size: { height: number; width?: number }, expectedWidth, expectedHeight) => {
    const { height, width } = size;
    const p = open();
    p.host.resize(height, width);
    expect(p.dialog.style.width).toBe(expectedWidth);
    expect(p.dialog.style.height).toBe(expectedHeight);
  });
});

describe('several popups at once', () => {
  test('only the topmost takes Escape', () => {
    const first = open();
    const second = open();
    key('Escape');
    expect(second.dismiss).toHaveBeenCalledTimes(1);
    expect(first.dismiss).not.toHaveBeenCalled();
    second.host.unmount();
    key('Escape');
    expect(first.dismiss).toHaveBeenCalledTimes(1);
  });

  test('scroll stays locked until the last one closes, in any order', () => {
    document.body.style.overflow = 'auto';
    const first = open();
    const second = open();
    first.host.unmount();
    expect(document.body.style.overflow).toBe('hidden');
    second.host.unmount();
    expect(document.body.style.overflow).toBe('auto');
  });

  test('closing one underneath leaves the focus in the one on top', () => {
    const first = open();
    const second = open();
    first.host.unmount();
    expect(document.activeElement).toBe(second.closeButton);
  });
});
