/** Text made safe for HTML content and attribute values. */
export function esc(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A count with its digits grouped, as the CLI prints counts. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** A time for people: its UTC ISO form without milliseconds, in a <time> element. */
export function when(iso: string | null): string {
  if (iso === null) return '<span class="muted">never</span>';
  return `<time datetime="${esc(iso)}">${esc(iso.replace(/\.\d{3}Z$/, 'Z').replace('T', ' '))}</time>`;
}

/** A status word with an icon beside it, so that the colour is never the only sign. */
export function badge(kind: 'ok' | 'warn' | 'bad' | 'info', word: string): string {
  const icon = { ok: '✓', warn: '!', bad: '✕', info: '•' }[kind];
  return `<span class="badge ${kind}"><span aria-hidden="true">${icon}</span> ${esc(word)}</span>`;
}
