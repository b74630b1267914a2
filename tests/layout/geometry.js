// What a person sees go wrong in a page's layout, from the boxes Chromium laid out: two visible controls or labels
// on top of each other, something that runs out of its card or out of the viewport, a label's text spilling out of
// its own box. Returns one line per fault, naming the elements.
(() => {
  const CONTROLS = 'a[href], button, input:not([type=hidden]), select, textarea, summary, output, img, svg, video';
  const LABELS = 'label, legend, h1, h2, h3, dt, th, .label, .status, .badge, .count';
  // What must stay inside its card, besides the controls and labels: the text people read.
  const TEXT = 'p, dd, td, li, code, .value';
  const CARDS = '.card, dialog, .stat, fieldset, .quote, .link-card';
  const SLACK = 1;  // sub-pixel rounding
  const modal = document.querySelector('dialog:modal');  // the page behind a modal dialog is inert and covered
  const scope = modal || document.body;
  const width = document.documentElement.clientWidth;

  function shown(el) {
    if (el.parentElement && el.parentElement.closest('svg')) return false;  // an icon's own paths
    // A closed <details> keeps its content laid out but hidden (content-visibility): checkVisibility knows.
    if (!el.checkVisibility({ opacityProperty: true, visibilityProperty: true, contentVisibilityAuto: true })) return false;
    const r = el.getBoundingClientRect();
    // Under 2 px is the visually-hidden idiom; wholly left of the page is the skip link's.
    return r.width >= 2 && r.height >= 2 && r.right > 0;
  }

  function name(el) {
    const id = el.id ? '#' + el.id : '';
    const testid = el.dataset.testid ? `[${el.dataset.testid}]` : '';
    const text = (el.innerText || el.value || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ');
    return `<${el.tagName.toLowerCase()}${id}${testid}> "${text.slice(0, 40)}"`;
  }

  // Inline elements that wrap take one box a line; their bounding box would cover the text between the lines.
  function boxes(el) {
    const inline = getComputedStyle(el).display === 'inline';
    return (inline ? [...el.getClientRects()] : [el.getBoundingClientRect()]).filter((r) => r.width >= 2 && r.height >= 2);
  }

  function overlap(a, b) {
    const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
    const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
    return w > 2 && h > 2;
  }

  function clipped(el, card) {
    // The box that clips el short of its card: an ancestor that scrolls or hides what overflows it.
    for (let up = el.parentElement; up && up !== card; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (style.overflowX !== 'visible' || style.overflowY !== 'visible') return up;
    }
    return null;
  }

  const faults = [];
  const items = [...scope.querySelectorAll(`${CONTROLS}, ${LABELS}`)].filter(shown);
  for (let i = 0; i < items.length; i += 1) {
    for (let j = i + 1; j < items.length; j += 1) {
      const a = items[i]; const b = items[j];
      if (a.contains(b) || b.contains(a)) continue;
      if (boxes(a).some((ra) => boxes(b).some((rb) => overlap(ra, rb)))) faults.push(`overlap: ${name(a)} and ${name(b)}`);
    }
  }

  const scrollers = new Set();
  const readable = [...scope.querySelectorAll(`${CONTROLS}, ${LABELS}, ${TEXT}`)].filter(shown);
  for (const el of readable) {
    const r = el.getBoundingClientRect();
    const card = el.parentElement && el.parentElement.closest(CARDS);
    const clip = card && clipped(el, card);
    const scrolls = clip && clip.scrollWidth > clip.clientWidth + SLACK;  // reported once, as the box that scrolls
    if (!scrolls && (r.left < -SLACK || r.right > width + SLACK)) faults.push(`out of the viewport (${width} px): ${name(el)}`);
    if (scrolls) scrollers.add(clip);
    else if (card && !clip) {
      const c = card.getBoundingClientRect();
      if (r.left < c.left - SLACK || r.right > c.right + SLACK || r.top < c.top - SLACK || r.bottom > c.bottom + SLACK) {
        faults.push(`out of its card ${name(card).slice(0, 30)}: ${name(el)}`);
      }
    }
    const style = getComputedStyle(el);
    const block = style.display !== 'inline' && !['INPUT', 'SELECT', 'TEXTAREA', 'svg', 'IMG'].includes(el.tagName);
    if (block && el.scrollWidth > el.clientWidth + SLACK) {
      const cut = style.overflowX !== 'visible';
      if (!cut) faults.push(`text runs out of its box: ${name(el)}`);
      else if (style.textOverflow !== 'ellipsis') faults.push(`text cut without an ellipsis: ${name(el)}`);
    }
  }
  for (const clip of scrollers) faults.push(`scrolls sideways inside its card: ${name(clip).slice(0, 60)}`);
  if (document.documentElement.scrollWidth > width + SLACK) {
    faults.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide in ${width} px`);
  }
  return [...new Set(faults)];
})()
