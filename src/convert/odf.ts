import { encrypted, failed, guarded } from './failure.js';
import { inlineText, MarkdownWriter } from './markdown.js';
import { readListStyles, TableBudget, textBlocks, type OdfText } from './odf-text.js';
import { odpSlides } from './odp.js';
import { odsSheets } from './ods.js';
import { numberItems, writeBlocks, writeSlides } from './slides.js';
import type { ConvertLimits, Converter, ConvertResult } from './types.js';
import { child, elements, find, parseXml, textOf, type XEl } from './xml.js';
import { openZip, type ZipParts } from './zip.js';

/** The parts an ODF package is read from: its XML and its mimetype, never pictures or embedded objects. */
const ODF_PART = (name: string): boolean => name === 'mimetype' || /\.xml$/i.test(name);

type OdfKind = { format: 'ODT' | 'ODS' | 'ODP'; mime: string; body: string };
const ODT: OdfKind = { format: 'ODT', mime: 'application/vnd.oasis.opendocument.text', body: 'office:text' };
const ODS: OdfKind = { format: 'ODS', mime: 'application/vnd.oasis.opendocument.spreadsheet', body: 'office:spreadsheet' };
const ODP: OdfKind = { format: 'ODP', mime: 'application/vnd.oasis.opendocument.presentation', body: 'office:presentation' };
const KINDS = [ODT, ODS, ODP];

/** An ODF text or presentation read far enough to convert: its content's body, list styles and title. */
export type OdfDocument = { body: XEl; ctx: OdfText; title: string; limits: ConvertLimits };

/** What a mimetype names, for a person ("an ODS", "a text/plain file"). */
function kindName(mime: string): string {
  const kind = KINDS.find((k) => mime === k.mime || mime.startsWith(`${k.mime}-`));
  return kind === undefined ? `a ${mime} file` : `an ${kind.format}`;
}

async function xmlPart(zip: ZipParts, name: string, format: string, maxDepth: number): Promise<XEl | undefined> {
  const text = await zip.text(name);
  return text === undefined ? undefined : parseXml(text, `the ${format} part ${name}`, maxDepth);
}

/** Names the kind of ODF a content.xml's office:body holds, when it is not `kind`. */
function otherKind(kind: OdfKind, bodyName: string | undefined): never {
  const other = KINDS.find((k) => k.body === bodyName);
  throw failed(
    other === undefined
      ? `the ${kind.format}'s content.xml has no ${kind.body} body`
      : `the file is an ${other.format} (its content is ${other.body}), not an ${kind.format}`,
  );
}

/**
 * Opens an ODF package as `kind` and returns its content.xml: an encrypted one (the manifest's
 * encryption-data) is `encrypted`, one whose mimetype is another kind is not this format, and content.xml
 * must be there.
 */
async function openOdf(zip: ZipParts, kind: OdfKind): Promise<Buffer> {
  const { format } = kind;
  const manifest = await zip.text('META-INF/manifest.xml');
  // An element named encryption-data (whatever its prefix), not the words in a file's path.
  if (manifest !== undefined && /<([\w.-]+:)?encryption-data[\s/>]/.test(manifest)) {
    throw encrypted(`the ${format} file is password-protected (its manifest lists encrypted parts); remove the password and save it again`);
  }
  const mime = (await zip.text('mimetype'))?.trim();
  if (mime !== undefined && mime !== kind.mime && !mime.startsWith(`${kind.mime}-`)) {
    throw failed(`the file is ${kindName(mime)} (its mimetype says ${mime}), not an ${format}`);
  }
  const content = await zip.read('content.xml');
  if (content === undefined) {
    throw failed(
      zip.has('[Content_Types].xml')
        ? `the file is an Office Open XML package (it has [Content_Types].xml), not an ${format}`
        : `the ${format} has no content.xml: the file is damaged or not an ${format}`,
    );
  }
  return content;
}

/** The document title from meta.xml (dc:title), if any. */
async function odfTitle(zip: ZipParts, format: string, maxDepth: number): Promise<string> {
  const meta = await xmlPart(zip, 'meta.xml', format, maxDepth);
  const titleEl = meta && find(meta, 'dc:title');
  return titleEl === undefined ? '' : inlineText(textOf(titleEl));
}

/** An ODT's or ODP's content as a tree, with the list styles of content.xml and styles.xml. */
async function readOdf(zip: ZipParts, kind: OdfKind, limits: ConvertLimits): Promise<OdfDocument> {
  const content = parseXml(await openOdf(zip, kind), `the ${kind.format} part content.xml`, limits.maxDepth);
  const officeBody = find(content, 'office:body');
  const body = officeBody === undefined ? undefined : child(officeBody, kind.body);
  if (body === undefined) otherKind(kind, officeBody === undefined ? undefined : elements(officeBody)[0]?.name);
  const styles = await xmlPart(zip, 'styles.xml', kind.format, limits.maxDepth);
  const lists = readListStyles([
    find(content, 'office:automatic-styles'),
    styles && find(styles, 'office:styles'),
    styles && find(styles, 'office:automatic-styles'),
  ]);
  return { body, ctx: { lists, notes: [] }, title: await odfTitle(zip, kind.format, limits.maxDepth), limits };
}

/** A cell budget from the output limit: each cell written costs at least three characters (`| x`). */
export const cellBudget = (limits: ConvertLimits): { cells: number } => ({ cells: Math.floor(limits.maxOutputChars / 3) });

function odfConverter(kind: OdfKind, write: (zip: ZipParts, md: MarkdownWriter, limits: ConvertLimits) => Promise<number>): Converter {
  return (bytes, { limits }) =>
    guarded(kind.format, bytes, async (): Promise<ConvertResult> => {
      const zip = await openZip(bytes, kind.format, limits, ODF_PART);
      try {
        const md = new MarkdownWriter(limits.maxOutputChars, kind.format);
        let units: number;
        try {
          units = await write(zip, md, limits);
        } catch (err) {
          if (!(err instanceof TableBudget)) throw err;
          throw failed(
            `the ${kind.format}'s tables repeat cells past the output limit of ${limits.maxOutputChars} characters: raise maxOutputChars`,
          );
        }
        if (md.empty) return { ok: false, skip: 'no-text', reason: `the ${kind.format} holds no text` };
        return { ok: true, markdown: md.toString(), units };
      } finally {
        zip.close();
      }
    });
}

/** ODT: headings by outline level, paragraphs, lists with levels and numbering, tables, then the footnotes. */
export const convertOdt: Converter = odfConverter(ODT, async (zip, md, limits) => {
  const doc = await readOdf(zip, ODT, limits);
  const blocks = numberItems(textBlocks(doc.body, doc.ctx, cellBudget(doc.limits)));
  const first = blocks[0];
  if (doc.title !== '' && !(first?.kind === 'heading' && first.level === 1 && inlineText(first.text) === doc.title))
    md.heading(1, doc.title);
  writeBlocks(md, blocks);
  doc.ctx.notes.forEach((note, i) => md.raw(`[^${i + 1}]: ${inlineText(note)}`));
  return 1;
});

/** ODS: each sheet as `## Sheet: NAME` and a pipe table of its cells' shown text. */
export const convertOds: Converter = odfConverter(ODS, async (zip, md, limits) => {
  const content = await openOdf(zip, ODS);
  const { body, sheets } = odsSheets(content, 'the ODS part content.xml', limits.maxDepth, cellBudget(limits));
  if (body !== ODS.body) otherKind(ODS, body || undefined);
  const title = await odfTitle(zip, 'ODS', limits.maxDepth);
  if (title !== '') md.heading(1, title);
  for (const sheet of sheets) {
    md.heading(2, `Sheet: ${sheet.name}`);
    md.table(sheet.rows);
  }
  return sheets.length;
});

/** ODP: slides as for PPTX (draw:page in order, the title frame as its heading, outline levels, tables, notes). */
export const convertOdp: Converter = odfConverter(ODP, async (zip, md, limits) => {
  const doc = await readOdf(zip, ODP, limits);
  if (doc.title !== '') md.heading(1, doc.title);
  const slides = odpSlides(doc.body, doc.ctx, cellBudget(doc.limits));
  writeSlides(md, slides);
  return slides.length;
});
