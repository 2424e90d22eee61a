type Expect = 'value' | 'valueOrEnd' | 'key' | 'keyOrEnd' | 'colon' | 'commaOrEnd' | 'done';

const SCALAR = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

/**
 * The offset of the first JSON syntax error in text, or undefined when it is valid JSON. Iterative
 * (no recursion, so deep nesting cannot overflow the stack); used only after JSON.parse has failed,
 * to say where, the same way on every Node version.
 */
export function jsonErrorOffset(text: string): number | undefined {
  const stack: string[] = [];
  let i = 0;
  let expect: Expect = 'value';
  const after = (): Expect => (stack.length === 0 ? 'done' : 'commaOrEnd');
  const skipString = (): number | undefined => {
    for (i++; i < text.length;) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return undefined;
      }
      if (c === 0x5c) {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(text)) return i;
        i = ESCAPE.lastIndex;
      } else if (c < 0x20) {
        return i;
      } else i++;
    }
    return text.length;
  };
  for (;;) {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
    if (i >= text.length) return expect === 'done' ? undefined : text.length;
    const c = text[i];
    if (expect === 'done') return i;
    if ((expect === 'valueOrEnd' && c === ']') || (expect === 'keyOrEnd' && c === '}')) {
      stack.pop();
      i++;
      expect = after();
    } else if (expect === 'value' || expect === 'valueOrEnd') {
      if (c === '{' || c === '[') {
        stack.push(c);
        i++;
        expect = c === '{' ? 'keyOrEnd' : 'valueOrEnd';
      } else if (c === '"') {
        const bad = skipString();
        if (bad !== undefined) return bad;
        expect = after();
      } else {
        SCALAR.lastIndex = i;
        if (!SCALAR.test(text)) return i;
        i = SCALAR.lastIndex;
        expect = after();
      }
    } else if (expect === 'key' || expect === 'keyOrEnd') {
      if (c !== '"') return i;
      const bad = skipString();
      if (bad !== undefined) return bad;
      expect = 'colon';
    } else if (expect === 'colon') {
      if (c !== ':') return i;
      i++;
      expect = 'value';
    } else {
      const top = stack.at(-1);
      if (c === ',') expect = top === '{' ? 'key' : 'value';
      else if ((top === '{' && c === '}') || (top === '[' && c === ']')) {
        stack.pop();
        expect = after();
      } else return i;
      i++;
    }
  }
}
