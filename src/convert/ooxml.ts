import { failed } from './failure.js';
import { elements, parseXml, type XEl } from './xml.js';
import { resolvePart, type ZipParts } from './zip.js';

/** One relationship of an OOXML part: its type's last segment (`slide`, `notesSlide`) and the part it points to. */
export type Rel = { type: string; target: string; external: boolean };

/** The part's XML, parsed; a missing part fails naming `what`. */
export async function readXmlPart(zip: ZipParts, name: string, what: string, maxDepth: number): Promise<XEl> {
  const text = await zip.text(name);
  if (text === undefined) throw failed(`${what} (${name}) is missing from the zip`);
  return parseXml(text, `${what} (${name})`, maxDepth);
}

/** The relationships of `part` by id (`ppt/_rels/presentation.xml.rels` for `ppt/presentation.xml`); none when it has no rels part. */
export async function readRels(zip: ZipParts, part: string, maxDepth: number): Promise<Map<string, Rel>> {
  const slash = part.lastIndexOf('/');
  const relsName = `${part.slice(0, slash + 1)}_rels/${part.slice(slash + 1)}.rels`; // '' gives the package's _rels/.rels
  const rels = new Map<string, Rel>();
  const text = await zip.text(relsName);
  if (text === undefined) return rels;
  const root = parseXml(text, `the relationships part ${relsName}`, maxDepth);
  for (const list of elements(root)) {
    for (const r of elements(list)) {
      const id = r.attrs.Id;
      const target = r.attrs.Target;
      if (id === undefined || target === undefined) continue;
      const external = r.attrs.TargetMode === 'External';
      const type = (r.attrs.Type ?? '').split('/').pop() ?? '';
      rels.set(id, { type, target: external ? target : resolvePart(part, target), external });
    }
  }
  return rels;
}

/** The part the package's root relationships name as its main document (`officeDocument`), or `fallback`. */
export async function mainPart(zip: ZipParts, fallback: string, maxDepth: number): Promise<string> {
  const rels = await readRels(zip, '', maxDepth);
  for (const r of rels.values()) if (r.type === 'officeDocument' && !r.external && zip.has(r.target)) return r.target;
  return fallback;
}
