// Fill the table of contents' page numbers (written by prepare.js). Argument: {section id: page}.
(pages) => {
  for (const span of document.querySelectorAll('.llama3-toc-page')) span.textContent = pages[span.dataset.target] || '?';
}
