import picomatch from 'picomatch';

/**
 * File names that look like secrets. A match is never read nor uploaded, whatever its extension
 * (`credentials.json` and `secrets.yaml` have supported extensions) and whatever the include globs
 * or ignore files say. Matched against the base name, case-insensitively.
 * Add to this table, never around it: it is the single list (docs and tests read it).
 */
export const SECRET_FILE_PATTERNS: readonly string[] = [
  // environment files
  '.env', '.env.*', '*.env',
  // private keys and certificates with keys
  '*.pem', '*.key', '*.p12', '*.pfx', '*.jks', '*.keystore', '*.ppk', '*.asc',
  'id_rsa*', 'id_dsa*', 'id_ecdsa*', 'id_ed25519*',
  // package-manager and tool credentials
  '.npmrc', '.pypirc', '.netrc', '_netrc', '.git-credentials', '.pgpass', '.htpasswd', '.dockercfg',
  // cloud and service-account credentials
  'credentials', 'credentials*.json', 'client_secret*.json', 'service-account*.json',
  // password stores and generic secret files
  '*.kdbx', 'secrets.*', 'secret.*',
];

const matchers = SECRET_FILE_PATTERNS.map((pattern) => ({
  pattern,
  re: picomatch.makeRe(pattern, { nocase: true, dot: true }),
}));
// One alternation tested per file name; the per-pattern list only runs on a hit, to name the pattern.
const anySecret = new RegExp(matchers.map((m) => `(?:${m.re.source})`).join('|'), 'i');

/** The secret pattern a base file name matches (e.g. "*.pem"), or null when it looks harmless. */
export function secretPatternOf(baseName: string): string | null {
  if (!anySecret.test(baseName)) return null;
  return matchers.find((m) => m.re.test(baseName))?.pattern ?? null;
}
