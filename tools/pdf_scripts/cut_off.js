// With the page as wide as the printed text (pdf_print.TEXT_WIDTH_PX): what reaches past the right margin, or
// scrolls inside its box, and so would be cut off on paper: [tag, how many pixels, its first words].
// Argument: how many pixels past the margin still count as inside (an inline code's frame).
(tolerance) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const right = document.documentElement.clientWidth;  // the article grows with what it holds: the page's width is the margin
  const found = [];
  for (const el of article.querySelectorAll('pre, table, img, svg, mjx-container, div.cell_output > div, p, li')) {
    const box = el.getBoundingClientRect();
    const hidden = el.scrollWidth - el.clientWidth;
    const scrolls = hidden > tolerance && !['visible', ''].includes(getComputedStyle(el).overflowX);
    if (box.width && (box.right - right > tolerance || scrolls)) found.push([el, Math.round(Math.max(box.right - right, hidden))]);
  }
  return found.filter(([el]) => !found.some(([other]) => other !== el && el.contains(other)))  // the innermost: the cause
    .map(([el, px]) => [el.tagName.toLowerCase(), px, (el.textContent || el.getAttribute('src') || '').trim().slice(0, 60)]);
}
