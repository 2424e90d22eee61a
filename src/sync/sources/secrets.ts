import picomatch from 'picomatch';

/**
 * File names that look like secrets. A match is never read nor uploaded, whatever its extension
 * (`credentials.json` and `secrets.yaml` have supported extensions) and whatever the include globs
 * or ignore files say. Matched against the base name, case-insensitively.
 * Add to this table, never around it: it is the single list (docs and tests read it).
 */
export const SECRET_FILE_PATTERNS: readonly string[] = [
  // environment files (".env-staging.json", ".env_prod.txt", ".envrc" too)
  '.env',
  '.env.*',
  '*.env',
  '.env*',
  // private keys and certificates with keys
  '*.pem',
  '*.key',
  '*.p12',
  '*.pfx',
  '*.jks',
  '*.keystore',
  '*.ppk',
  '*.asc',
  'id_rsa*',
  'id_dsa*',
  'id_ecdsa*',
  'id_ed25519*',
  // package-manager and tool credentials
  '.npmrc',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.git-credentials',
  '.pgpass',
  '.htpasswd',
  '.dockercfg',
  // cloud and service-account credentials
  'credentials',
  'credentials*.json',
  'client_secret*.json',
  'service-account*.json',
  // credential data anywhere in the name ("aws_credentials.json", "gcloud-credentials.txt"); a document
  // about credentials ("credentials.md", "rotating-credentials.html") is not one
  '*credentials*.{json,txt,csv,tsv,xml,yaml,yml,ini,toml,cfg,conf,properties}',
  // password stores and generic secret files
  '*.kdbx',
  'secrets.*',
  'secret.*',
];

// Fast path for 100k names a scan: `*.ext` patterns become one Map lookup on the extension; the
// rest (exact names and prefixes) one case-insensitive alternation, tested first (".env" is reported
// as ".env", not "*.env"). The per-pattern list only runs on a hit, to name the pattern.
const byExtension = new Map<string, string>();
const others: { pattern: string; re: RegExp }[] = [];
const anywhere: { pattern: string; re: RegExp; word: string }[] = [];
for (const pattern of SECRET_FILE_PATTERNS) {
  const ext = /^\*\.([a-z0-9]+)$/.exec(pattern)?.[1];
  const re = picomatch.makeRe(pattern, { nocase: true, dot: true });
  if (ext !== undefined) byExtension.set(ext, pattern);
  else if (pattern.startsWith('*')) {
    // Its longest literal run ("credentials"): a name without that word is out after one indexOf-like scan.
    const word = (pattern.match(/[a-z0-9_-]+/gi) ?? []).reduce((a, b) => (b.length > a.length ? b : a), '');
    if (word.length < 4) throw new Error(`secret pattern ${pattern}: a pattern starting with * needs a word of 4+ characters`);
    anywhere.push({ pattern, re, word });
  } else others.push({ pattern, re });
}
const anyOther = new RegExp(others.map((m) => `(?:${m.re.source})`).join('|'), 'i');
// ...and that alternation only runs on names starting as one of those patterns can (".", "c", "i", "s",
// "_"): most names are out after one character.
const firstCodes = new Set(others.map((m) => lowerAscii(m.pattern.charCodeAt(0))));
const anyWord = anywhere.length === 0 ? null : new RegExp(anywhere.map((m) => m.word).join('|'), 'i');

/**
 * The secret pattern a base file name matches (e.g. "*.pem"), or null when it looks harmless.
 * `ext`: the name's lowercase extension when the caller has it (as extensionOf gives it: "" for none).
 */
export function secretPatternOf(baseName: string, ext?: string): string | null {
  if (firstCodes.has(lowerAscii(baseName.charCodeAt(0))) && anyOther.test(baseName)) {
    return others.find((m) => m.re.test(baseName))?.pattern ?? null;
  }
  if (anyWord?.test(baseName) === true) {
    const hit = anywhere.find((m) => m.re.test(baseName));
    if (hit !== undefined) return hit.pattern;
  }
  // extensionOf gives "" for ".pem", which "*.pem" still matches: such names take the long way.
  if (ext !== undefined && ext !== '') return byExtension.get(ext) ?? null;
  const dot = baseName.lastIndexOf('.');
  return dot < 0 ? null : (byExtension.get(baseName.slice(dot + 1).toLowerCase()) ?? null);
}

/** A character code with ASCII capitals folded to lower case (the patterns match case-insensitively). */
function lowerAscii(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}
