import type { Converter, ConvertType } from './types.js';

/** Each type's converter, loaded when a file of that type is first converted (pdf.js is large). */
const LOADERS: Record<ConvertType, () => Promise<Converter>> = {
  pdf: async () => (await import('./pdf.js')).convertPdf,
  pptx: async () => (await import('./pptx.js')).convertPptx,
  doc: async () => (await import('./doc.js')).convertDoc,
  odt: async () => (await import('./odf.js')).convertOdt,
  ods: async () => (await import('./odf.js')).convertOds,
  odp: async () => (await import('./odf.js')).convertOdp,
  rtf: async () => (await import('./rtf.js')).convertRtf,
  epub: async () => (await import('./epub.js')).convertEpub,
};

const loaded = new Map<ConvertType, Promise<Converter>>();

/** The converter of `type`, loaded once per thread. */
export function converterOf(type: ConvertType): Promise<Converter> {
  let converter = loaded.get(type);
  if (converter === undefined) {
    converter = LOADERS[type]();
    loaded.set(type, converter);
  }
  return converter;
}
