// MathJax 3 configuration for the site: the same delimiters as Jupyter. An undefined macro is
// shown as an error (no "noundefined" package), so that tests/test_site.py catches a typo.
// After typesetting, <html data-math="done"> (or "failed") tells the test that the page is ready.
window.MathJax = {
  tex: {
    inlineMath: [["$", "$"], ["\\(", "\\)"]],
    displayMath: [["$$", "$$"], ["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
    tags: "ams",
    packages: { "[-]": ["noundefined"] }
  },
  svg: { fontCache: "global" },
  startup: {
    pageReady: function () {
      return MathJax.startup.defaultPageReady().then(
        function () { document.documentElement.dataset.math = "done"; },
        function (err) { document.documentElement.dataset.math = "failed"; throw err; }
      );
    }
  }
};
