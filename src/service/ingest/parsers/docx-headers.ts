/** The local name of a prefixed XML name (`w:t` → `t`). */
const local = (name: string): string => name.slice(name.indexOf(':') + 1);

/**
 * The paragraphs of a DOCX's header and footer parts, in the order given, each paragraph once
 * (a header repeated in several sections, or on odd and even pages alike, is indexed once).
 * mammoth leaves headers and footers out; here their text runs (`w:t`) are read with their tabs
 * and breaks. A text box written twice, as DrawingML and as its VML fallback (`mc:Fallback`), is
 * read once.
 */
export async function headerFooterText(parts: readonly Buffer[]): Promise<string[]> {
  if (parts.length === 0) return [];
  const { Parser } = await import('htmlparser2');
  const seen = new Set<string>();
  const paragraphs: string[] = [];
  for (const part of parts) {
    let inText = 0;
    let fallback = 0;
    let current: string[] = [];
    const endParagraph = (): void => {
      const text = current
        .join('')
        .replace(/[ \t]+/g, ' ')
        .trim();
      current = [];
      if (text !== '' && !seen.has(text)) {
        seen.add(text);
        paragraphs.push(text);
      }
    };
    const parser = new Parser(
      {
        onopentag(name) {
          const n = local(name);
          if (n === 'Fallback') fallback++;
          else if (fallback > 0) return;
          else if (n === 't') inText++;
          else if (n === 'tab') current.push(' ');
          else if (n === 'br' || n === 'cr') current.push('\n');
        },
        onclosetag(name) {
          const n = local(name);
          if (n === 'Fallback') fallback = Math.max(0, fallback - 1);
          else if (fallback > 0) return;
          else if (n === 't') inText = Math.max(0, inText - 1);
          else if (n === 'p') endParagraph();
        },
        ontext(data) {
          if (inText > 0 && fallback === 0) current.push(data);
        },
      },
      { xmlMode: true, decodeEntities: true },
    );
    parser.write(new TextDecoder('utf-8').decode(part));
    parser.end();
    endParagraph();
  }
  return paragraphs;
}
