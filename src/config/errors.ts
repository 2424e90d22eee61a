import { KbsyncError } from '../shared/errors.js';

/** A path into the config, as zod and the YAML walker spell it: `['sources', 1, 'path']`. */
export type ConfigPath = readonly (string | number)[];

/** One thing wrong with a config file, located at a YAML line. */
export type ConfigProblem = {
  /** Dotted path of the offending key (`sources[1].path`); "" for the whole file. */
  path: string;
  /** 1-based line of the offending node, or of its nearest existing parent for a missing key. */
  line: number;
  message: string;
};

/** Every problem found in one config file, thrown at once (code `config_invalid`). */
export class ConfigError extends KbsyncError {
  /** The file's name as the user gave it (used as the prefix of each problem line). */
  readonly file: string;
  readonly problems: readonly ConfigProblem[];

  constructor(file: string, problems: readonly ConfigProblem[], options?: { cause?: unknown }) {
    const noun = problems.length === 1 ? 'problem' : 'problems';
    super('config_invalid', `${problems.length} ${noun} in ${file}:\n${problems.map((p) => formatProblem(file, p)).join('\n')}`, options);
    this.name = 'ConfigError';
    this.file = file;
    this.problems = problems;
  }
}

/** `sources[1].path` from `['sources', 1, 'path']`. */
export function formatPath(path: ConfigPath): string {
  return path.reduce<string>((out, seg) => (typeof seg === 'number' ? `${out}[${seg}]` : out === '' ? seg : `${out}.${seg}`), '');
}

/** One problem as a line: `kbsync.yaml:14: sources[1].path: no such directory`. */
export function formatProblem(file: string, problem: ConfigProblem): string {
  return problem.path === ''
    ? `${file}:${problem.line}: ${problem.message}`
    : `${file}:${problem.line}: ${problem.path}: ${problem.message}`;
}
