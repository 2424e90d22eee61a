// Fails when a comment in src/ states a measurement: a timing, a size, a percentage, a speed-up
// ratio, "measured", "on this machine", "was ~N". Such a figure is true on one machine on one day; the
// comment keeps the decision and its reason, the figure goes to bench/ and docs/benchmarks.md, its history
// to the commit body (docs/development.md, "Habits"). A number that is a rule (a limit's default, a
// protocol's constant) is not a measurement: written plainly it is not flagged; one that reads like a
// measurement goes into ALLOWED below, with the reason.
// Usage: node scripts/check-comment-figures.js [root ...] (default: src, co-located tests included)
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** A figure's unit: of time, of size, a share. */
const UNIT = String.raw`(?:ns|µs|us|ms|s|sec|seconds?|min|minutes?|[KMGT]i?B|kB|bytes|%)`;
/** A figure: "25", "1,208", "6.8". */
const NUM = String.raw`\d[\d,]*(?:\.\d+)?`;

/**
 * What a measurement looks like in prose, tried on each comment line once code spans (`...`) and
 * quoted examples ("...") are blanked: a figure given as approximate, compared, changed or taken, a
 * speed-up ratio, a share, a number of runs, and the words that come with one.
 */
const PATTERNS = [
  new RegExp(String.raw`~\s?\d`), // "~25 ms", "~3x"
  new RegExp(String.raw`\b(?:about|around|roughly|nearly|almost)\s+${NUM}\s?${UNIT}(?!\w)`, 'i'),
  new RegExp(String.raw`\d+\.\d+\s?(?:ns|µs|us|ms)\b`), // "6.8 ms": a decimal timing
  new RegExp(String.raw`${NUM}\s?${UNIT}?\s+(?:against|vs\.?|versus)\s+~?\d`, 'i'), // "6.8 ms against 8.8"
  new RegExp(String.raw`(?<![\w.])[+-]${NUM}\s?${UNIT}(?!\w)`), // "(+250 ms)", "-20%"
  new RegExp(String.raw`(?<![\w.])\d+(?:\.\d+)?[x×](?!\w)`), // "3x faster", "2×"
  new RegExp(String.raw`${NUM}\s*(?:->|→)\s*${NUM}\s?${UNIT}(?!\w)|\d,\d{3}\s*(?:->|→)`), // "1,208 -> 1,158 ms"
  new RegExp(String.raw`(?<![\w-])${NUM}\s?%`), // "20% more CPU" (a flag like -M100% is not a share)
  new RegExp(
    String.raw`\b(?:took|takes|taking|cost|costs|spent|saved|saves|gained|lost)\s+(?:about\s+|only\s+|~)?${NUM}\s?${UNIT}(?!\w)`,
    'i',
  ),
  new RegExp(String.raw`\b\d+\s+(?:interleaved\s+|warm\s+|cold\s+|timed\s+)?runs\b`, 'i'), // "21 interleaved runs"
  /\bmeasur(?:ed|ing|ements?)\b/i,
  /\bon\s+(?:this|my|our|the CI|a CI)\s+(?:[\w-]+\s+)?machine\b|\b\d+-core\b/i, // "on this 2-core machine"
  /\bwas\s+~|\bit was\s+(?:about\s+)?\d/i, // "it was ~25 ms"
  /\b(?:fast|slow|quick|cheap)\w*(?:\s+enough)?\s+here\b/i, // "fast enough here"
  /\b(?:median|p50|p95|p99)\b[^.]*\d/i,
];

/**
 * Comment lines whose number reads like a measurement but is a rule, as
 * `{ file: 'src/x/y.ts', text: 'a substring of the line', why: 'the reason the number stays' }`.
 * Empty: every such comment so far read as well written plainly ("about 4 characters a token").
 */
const ALLOWED = [];

/** Source files under `dir`, tests included. */
function filesUnder(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && !e.name.startsWith('.')) out.push(...filesUnder(p));
    } else if (/\.(?:ts|js|mjs)$/.test(e.name) && !/\.d\.ts$/.test(e.name)) out.push(resolve(p));
  }
  return out;
}

/** Every comment of the file, once, with the line it starts on. */
function commentsOf(file, text) {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const seen = new Map();
  const take = (ranges) => {
    for (const r of ranges ?? []) if (!seen.has(r.pos)) seen.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    ts.forEachChild(node, visit);
  };
  // a shebang is not a comment
  const start = text.startsWith('#!') ? text.indexOf('\n') + 1 : 0;
  take(ts.getLeadingCommentRanges(text, start));
  visit(sf);
  return [...seen].map(([pos, body]) => ({ line: sf.getLineAndCharacterOfPosition(pos).line + 1, body }));
}

const roots = process.argv.length > 2 ? process.argv.slice(2) : ['src'];
const files = roots.flatMap((r) => filesUnder(resolve(r)));
const found = [];
for (const file of files) {
  const rel = relative(process.cwd(), file).split('\\').join('/');
  for (const c of commentsOf(file, readFileSync(file, 'utf8'))) {
    const blank = (m) => m.replace(/[^\n]/g, ' ');
    const prose = c.body.replace(/`[^`]*`/g, blank).replace(/"[^"\n]*"/g, blank);
    const lines = c.body.split('\n');
    prose.split('\n').forEach((line, i) => {
      if (!PATTERNS.some((p) => p.test(line))) return;
      if (ALLOWED.some((a) => a.file === rel && lines[i].includes(a.text))) return;
      found.push(`${rel}:${c.line + i}: ${lines[i].trim()}`);
    });
  }
}

if (found.length > 0) {
  for (const f of found) console.error(f);
  console.error(
    `check-comment-figures: ${found.length} comment line(s) state a measurement. Keep the decision and its reason ` +
      'in the comment, move the figure to bench/ and docs/benchmarks.md and its history to the commit body; ' +
      'a number that is a rule (a default, a protocol constant) goes into ALLOWED in scripts/check-comment-figures.js.',
  );
  process.exit(1);
}
console.log(`check-comment-figures: no measurement in the comments of ${files.length} files`);
