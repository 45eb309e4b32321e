// Run in the loaded page before printing (tools/pdf_print.py): open every folded solution and deep dive, label
// them for paper, write the table of contents into #llama3-print-toc (a link for each notebook and each of its
// sections; the PDF's outline gives their pages), give the PDF its title. Argument: [words, title], the edition's words
// (pdf_stage.WORDS) and the PDF's title. Returns what is wrong with the page: images that did not load.
([words, title]) => {
  document.documentElement.dataset.theme = 'light';
  document.title = title;
  for (const d of document.querySelectorAll('details')) d.open = true;
  for (const s of document.querySelectorAll('details.llama3-solution > summary, details.hide > summary')) {
    s.textContent = words.solution;
    s.classList.add('llama3-print-label');
  }
  for (const s of document.querySelectorAll('details.llama3-deep-dives > summary > strong')) s.textContent = words.deep_dives;
  for (const s of document.querySelectorAll('details.llama3-deep-dives > summary')) {
    const strong = s.querySelector('strong'), list = s.querySelector('.llama3-deep-dives-list');
    s.replaceChildren(...[strong, list ? document.createTextNode(words.colon) : null, list].filter(Boolean));
  }
  const toc = document.getElementById('llama3-print-toc');
  let count = 0;
  const heading = section => section && section.querySelector(':scope > h1, :scope > h2, :scope > h3, :scope > h4');
  const entry = (section, level) => {
    const h = heading(section);
    const li = document.createElement('li');
    li.className = 'llama3-toc-' + level;
    const anchor = document.createElement('span');  // the sections' own ids repeat from notebook to notebook
    anchor.id = 'llama3-toc-' + (++count);
    h.prepend(anchor);
    const a = document.createElement('a');
    a.href = '#' + anchor.id;
    const text = document.createElement('span');
    text.className = 'llama3-toc-text';
    const copy = h.cloneNode(true);
    copy.querySelectorAll('.headerlink, [id]').forEach(x => x.remove());
    text.innerHTML = copy.innerHTML;
    a.append(text);
    li.append(a);
    return li;
  };
  const chapters = Array.from(document.querySelectorAll('span[id^="document-notebooks/"]'))
    .map(span => span.nextElementSibling).filter(s => s && s.tagName === 'SECTION' && s.id && heading(s));
  const list = document.createElement('ol');
  for (const chapter of chapters) {
    chapter.classList.add('llama3-chapter');
    const li = entry(chapter, 'chapter');
    const sections = Array.from(chapter.querySelectorAll(':scope > section')).filter(s => s.id && heading(s));
    if (sections.length) {
      const sub = document.createElement('ol');
      sections.forEach(s => sub.append(entry(s, 'section')));
      li.append(sub);
    }
    list.append(li);
  }
  const caption = document.createElement('p');
  caption.className = 'llama3-toc-title';
  caption.textContent = toc.dataset.title;
  toc.replaceChildren(caption, list);
  return {
    chapters: chapters.length,
    brokenImages: Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src.slice(0, 120)),
  };
}
