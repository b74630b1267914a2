// The embed mode: the iframe fills the container's width and takes the height its page asks for.
import { clamp, EMBED_HEIGHT, POPUP_HEIGHT } from './options';
import type { Host } from './popup';

export function embedHost(iframe: HTMLIFrameElement, container: Element): Host {
  // Until the page reports its height, the popup's default height keeps the layout from jumping twice.
  Object.assign(iframe.style, { display: 'block', width: '100%', height: `${POPUP_HEIGHT.default}px`, border: '0' });
  container.append(iframe);
  return {
    resize(height) {
      iframe.style.height = `${clamp(height, EMBED_HEIGHT)}px`;
    },
    unmount() {
      iframe.remove();
    },
  };
}
