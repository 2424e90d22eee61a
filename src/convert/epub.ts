import { encrypted, failed, guarded } from './failure.js';
import { htmlBlocks } from './html-blocks.js';
import { inlineText, MarkdownWriter } from './markdown.js';
import { numberItems, writeBlocks } from './slides.js';
import type { ConvertLimits, Converter, ConvertResult } from './types.js';
import { elements, find, findAll, parseXml, textOf, type XEl } from './xml.js';
import { openZip, resolvePart, type ZipParts } from './zip.js';

/** Encryption algorithms that only obfuscate embedded fonts (IDPF, Adobe): the text is still readable. */
const FONT_OBFUSCATION = new Set(['http://www.idpf.org/2008/embedding', 'http://ns.adobe.com/pdf/enc#RC']);
const XHTML = new Set(['application/xhtml+xml', 'text/html', 'application/x-dtbook+xml']);

/** The parts an EPUB is read from: its mimetype and its XML and (X)HTML, never images, fonts or media. */
const EPUB_PART = (name: string): boolean => name === 'mimetype' || /\.(xml|opf|ncx|xhtml|html?|htm)$/i.test(name);

type Chapter = { href: string; mediaType: string };
type Package = { title: string; creators: string[]; chapters: Chapter[] };

async function xml(zip: ZipParts, name: string, what: string, maxDepth: number): Promise<XEl> {
  const text = await zip.text(name);
  if (text === undefined) throw failed(`the EPUB has no ${what} (${name}): the file is damaged or not an EPUB`);
  return parseXml(text, `the EPUB's ${what} (${name})`, maxDepth);
}

/** Refuses an EPUB whose content (not just its fonts) is encrypted, or that carries DRM rights. */
async function checkEncryption(zip: ZipParts, maxDepth: number): Promise<void> {
  if (zip.has('META-INF/rights.xml')) throw encrypted('the EPUB carries DRM (META-INF/rights.xml): its chapters are encrypted');
  const text = await zip.text('META-INF/encryption.xml');
  if (text === undefined) return;
  const root = parseXml(text, "the EPUB's encryption list (META-INF/encryption.xml)", maxDepth);
  for (const data of findAll(root, 'enc:EncryptedData').concat(findAll(root, 'EncryptedData'))) {
    const method = find(data, 'enc:EncryptionMethod') ?? find(data, 'EncryptionMethod');
    const algorithm = method?.attrs.Algorithm ?? '';
    if (!FONT_OBFUSCATION.has(algorithm)) {
      const ref = find(data, 'enc:CipherReference') ?? find(data, 'CipherReference');
      throw encrypted(
        `the EPUB's content is encrypted (${ref?.attrs.URI ?? 'a part'} with ${algorithm || 'an unnamed algorithm'}): it is DRM-protected`,
      );
    }
  }
}

/** The package document: container.xml's rootfile, then the OPF's title, creators and spine (nav document and non-XHTML items dropped). */
async function readPackage(zip: ZipParts, maxDepth: number): Promise<Package> {
  const container = await xml(zip, 'META-INF/container.xml', 'container', maxDepth);
  const rootfile = findAll(container, 'rootfile').find(
    (r) => (r.attrs['media-type'] ?? 'application/oebps-package+xml') === 'application/oebps-package+xml',
  );
  const opfPath = rootfile?.attrs['full-path'];
  if (opfPath === undefined) throw failed("the EPUB's container.xml names no package document (rootfile)");
  const opf = await xml(zip, opfPath, 'package document', maxDepth);
  const metadata = find(opf, 'metadata') ?? find(opf, 'opf:metadata');
  const dc = (name: string): string[] =>
    metadata === undefined
      ? []
      : findAll(metadata, name)
          .map((e) => inlineText(textOf(e)))
          .filter((t) => t !== '');
  const manifest = new Map<string, { href: string; mediaType: string; nav: boolean }>();
  for (const item of findAll(opf, 'item').concat(findAll(opf, 'opf:item'))) {
    const id = item.attrs.id;
    const href = item.attrs.href;
    if (id === undefined || href === undefined) continue;
    manifest.set(id, {
      href: resolvePart(opfPath, href.split('#')[0] ?? href),
      mediaType: item.attrs['media-type'] ?? '',
      nav: /\bnav\b/.test(item.attrs.properties ?? ''),
    });
  }
  // The guide (EPUB 2) names the cover, title page and table of contents: boilerplate, whatever their markup.
  const guided = new Set(
    findAll(opf, 'reference')
      .concat(findAll(opf, 'opf:reference'))
      .filter((r) => /^(cover|toc|title-page)$/i.test(r.attrs.type ?? ''))
      .map((r) => resolvePart(opfPath, (r.attrs.href ?? '').split('#')[0] ?? '')),
  );
  const spine = find(opf, 'spine') ?? find(opf, 'opf:spine');
  if (spine === undefined) throw failed(`the EPUB's package document (${opfPath}) has no spine`);
  const chapters: Chapter[] = [];
  for (const ref of elements(spine)) {
    const item = manifest.get(ref.attrs.idref ?? '');
    if (item === undefined || item.nav || !XHTML.has(item.mediaType) || guided.has(item.href)) continue;
    chapters.push({ href: item.href, mediaType: item.mediaType });
  }
  return { title: dc('dc:title')[0] ?? '', creators: dc('dc:creator'), chapters };
}

/**
 * A table of contents the book carries as a chapter: outside its headings, all its text is in links to
 * other parts of the book (two or more of them).
 */
function isContentsPage(body: XEl): boolean {
  let links = 0;
  let loose = false;
  const walk = (el: XEl): void => {
    for (const c of el.children) {
      if (typeof c === 'string') {
        if (c.trim() !== '') loose = true;
      } else if (/^h[1-6]$/.test(c.name) || c.name === 'script' || c.name === 'style') continue;
      else if (c.name === 'a' && /^[^#]/.test(c.attrs.href ?? '') && !/^[a-z]+:/i.test(c.attrs.href ?? '')) links++;
      else walk(c);
    }
  };
  walk(body);
  return links >= 2 && !loose;
}

/** One chapter's XHTML as Markdown blocks; a part the spine names but the zip lacks fails naming it. */
async function chapterBlocks(zip: ZipParts, chapter: Chapter, n: number, limits: ConvertLimits) {
  const text = await zip.text(chapter.href);
  if (text === undefined) throw failed(`chapter ${n} (${chapter.href}) is in the EPUB's spine but not in its zip`);
  const root = parseXml(text, `chapter ${n} (${chapter.href})`, limits.maxDepth, true);
  const body = find(root, 'body') ?? root;
  return isContentsPage(body) ? [] : htmlBlocks(body);
}

/** EPUB: the chapters in spine order, their headings kept; the navigation document, covers and title pages dropped. */
export const convertEpub: Converter = (bytes, { limits }) =>
  guarded('EPUB', bytes, async (): Promise<ConvertResult> => {
    const zip = await openZip(bytes, 'EPUB', limits, EPUB_PART);
    try {
      const mime = (await zip.text('mimetype'))?.trim();
      if (mime !== undefined && mime !== 'application/epub+zip')
        throw failed(`the file's mimetype says ${mime}, not application/epub+zip: it is not an EPUB`);
      if (mime === undefined && !zip.has('META-INF/container.xml'))
        throw failed('the zip has neither a mimetype nor META-INF/container.xml: it is not an EPUB');
      await checkEncryption(zip, limits.maxDepth);
      const pkg = await readPackage(zip, limits.maxDepth);
      const md = new MarkdownWriter(limits.maxOutputChars, 'EPUB');
      if (pkg.title !== '') md.heading(1, pkg.title);
      if (pkg.creators.length > 0) md.paragraph(pkg.creators.join(', '));
      let units = 0;
      for (const [i, chapter] of pkg.chapters.entries()) {
        const blocks = numberItems(await chapterBlocks(zip, chapter, i + 1, limits));
        // A title page that only repeats the title and the authors is boilerplate (they are written above).
        const known = new Set([pkg.title, ...pkg.creators]);
        if (blocks.every((b) => (b.kind === 'heading' || b.kind === 'paragraph') && known.has(inlineText(b.text)))) continue;
        units++;
        writeBlocks(md, blocks);
      }
      if (units === 0) return { ok: false, skip: 'no-text', reason: `the EPUB's ${pkg.chapters.length} chapters hold no text` };
      return { ok: true, markdown: md.toString(), units };
    } finally {
      zip.close();
    }
  });
