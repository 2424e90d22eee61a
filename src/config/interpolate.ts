/** The environment interpolation reads from (process.env or a test's object). */
export type Env = Readonly<Record<string, string | undefined>>;

/** The outcome of interpolating one string. */
export type Interpolated = {
  value: string;
  /** Names of the variables the text refers to, in order. */
  variables: string[];
  /** Problems, each a sentence: an unset variable without a default, a malformed reference. */
  problems: string[];
};

const REFERENCE = /^([A-Za-z_][A-Za-z0-9_]*)(?::-([^]*))?$/;

/**
 * Expands `${VAR}` and `${VAR:-default}` from `env` (the default applies when VAR is unset or empty,
 * as in the shell); `$${` is a literal `${`. Defaults are literal text: references inside them are
 * not expanded. An unset `${VAR}` without a default is a problem, never an empty string.
 */
export function interpolate(text: string, env: Env): Interpolated {
  const variables: string[] = [];
  const problems: string[] = [];
  let value = '';
  let i = 0;
  while (i < text.length) {
    if (text.startsWith('$${', i)) {
      value += '${';
      i += 3;
      continue;
    }
    if (!text.startsWith('${', i)) {
      value += text[i];
      i += 1;
      continue;
    }
    const end = text.indexOf('}', i + 2);
    if (end === -1) {
      problems.push(`unterminated "\${" (write "$\${" for a literal "\${")`);
      value += text.slice(i);
      break;
    }
    const inner = text.slice(i + 2, end);
    const match = REFERENCE.exec(inner);
    if (match === null) {
      problems.push(`invalid variable reference "\${${inner}}" (use \${NAME} or \${NAME:-default})`);
    } else {
      const name = match[1] ?? '';
      const fallback = match[2];
      const set = env[name];
      variables.push(name);
      if (set !== undefined && (fallback === undefined || set !== '')) value += set;
      else if (fallback !== undefined) value += fallback;
      else problems.push(`environment variable ${name} is not set (use \${${name}:-default} for a default)`);
    }
    i = end + 1;
  }
  return { value, variables, problems };
}
