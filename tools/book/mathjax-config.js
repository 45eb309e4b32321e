// MathJax 3 configuration of the course site (tools/book/local_mathjax.py loads MathJax from _static/).
// Only Sphinx's math elements and notebook outputs are typeset, never prose or code. An undefined
// macro is shown as an error (no "noundefined" package), so that tests/site/test_site.py catches a typo.
// After typesetting, <html data-math="done"> (or "failed") tells the browser test that the page is ready.
window.MathJax = {
  tex: { tags: "ams", packages: { "[-]": ["noundefined"] } },
  svg: { fontCache: "global" },
  options: {
    enableMenu: false,
    ignoreHtmlClass: "tex2jax_ignore|mathjax_ignore|document",
    processHtmlClass: "tex2jax_process|mathjax_process|math|output_area"
  },
  startup: {
    pageReady: function () {
      return MathJax.startup.defaultPageReady().then(
        function () { document.documentElement.dataset.math = "done"; },
        function (err) { document.documentElement.dataset.math = "failed"; throw err; }
      );
    }
  }
};
