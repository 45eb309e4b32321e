"""Sphinx extension: the Chinese edition's search finds Chinese words without a word-segmentation dictionary.

Sphinx indexes Chinese text only through the package jieba. This indexes each run of Chinese characters as its
overlapping pairs (旋转位置 -> 旋转, 转位, 位置), and the search page splits a query the same way, so a query of two
or more characters finds the pages that hold every pair. Latin words are indexed as by Sphinx.
"""

from __future__ import annotations

import re

from sphinx.application import Sphinx
from sphinx.search.zh import SearchChinese

#: CJK Unified Ideographs (with extension A) and the compatibility block: the characters split into pairs.
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
HAN_RUN = re.compile(f"[{HAN}]+")


def bigrams(text: str) -> list[str]:
    """The overlapping pairs of Chinese characters in ``text`` (a lone character stands for itself)."""
    out = []
    for run in HAN_RUN.findall(text):
        out += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return out


# The query's splitter on the search page: Sphinx's own (splitQuery in searchtools.js), with each run of
# Chinese characters replaced by its pairs as above. Written without < > & so that no template escapes it.
JS_SPLITTER = r"""
var splitQuery = function (query) {
  var out = [];
  query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu).forEach(function (term) {
    var runs = term.split(/([\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+)/u);
    runs.forEach(function (part, i) {
      if (!part) return;
      if (i % 2 === 0) { out.push(part); return; }
      if (part.length === 1) { out.push(part); return; }
      for (var k = 0; k + 1 !== part.length; k++) out.push(part.substr(k, 2));
    });
  });
  return out;
};
"""


class SearchChineseBigrams(SearchChinese):
    """Sphinx's Chinese search language, indexing Chinese text as character pairs (see the module docstring)."""

    js_splitter_code = JS_SPLITTER
    # Sphinx 9.0 names the browser's stemmer after language_name ("window.Stemmer = ChineseStemmer"), which
    # does not exist: Chinese uses the English stemmer for Latin words, and search fails with a
    # ReferenceError (sphinx-doc/sphinx issue 14229, fixed by pull request 14416 in a later release).
    language_name = "English"

    def split(self, input: str) -> list[str]:
        latin1 = [term.strip() for term in self.latin1_letters.findall(input)]
        self.latin_terms.update(latin1)
        return bigrams(input) + latin1


def setup(app: Sphinx) -> dict:
    app.add_search_language(SearchChineseBigrams)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
