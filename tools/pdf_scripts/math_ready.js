// Whether the page is ready to print: MathJax has typeset it (tools/book/mathjax-config.js sets data-math),
// or the page has no maths to typeset. tools/pdf_print.py waits for it to be true.
() => document.documentElement.dataset.math
  || (!document.querySelector('script[src*="mathjax"]') && document.readyState === 'complete')
