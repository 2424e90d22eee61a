import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { KbsyncError } from '../../src/shared/errors.js';
import { EXIT, exitCodeForRun, reportError } from '../../src/cli/exit.js';
import { createContext } from '../../src/cli/context.js';
import { runCli, useTempDirs } from './helpers.js';

const tempDir = useTempDirs();

describe('kbsync main()', () => {
  it('prints help on --help and exits 0', async () => {
    const run = await runCli(['--help'], { cwd: tempDir() });

    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Usage: kbsync [options] [command]');
    expect(run.stdout).toContain('-c, --config <file>');
    expect(run.stdout).toMatch(/init \[options\]/);
    expect(run.stdout).toContain('Exit codes: 0 done');
    expect(run.stderr).toBe('');
  });

  it('prints the version and exits 0', async () => {
    const run = await runCli(['--version'], { cwd: tempDir() });

    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });

  it.each([
    ['an unknown command', ['frobnicate'], "error: unknown command 'frobnicate'"],
    ['a misspelt subcommand, with a suggestion', ['config', 'chek'], '(Did you mean check?)'],
    ['an unknown option', ['init', '--bogus'], "error: unknown option '--bogus'"],
    ['an extra argument', ['init', 'extra'], 'error: too many arguments'],
    ['no command at all', [], 'Usage: kbsync'],
  ])('exits 2 on %s', async (_name, args, message) => {
    const run = await runCli(args, { cwd: tempDir() });

    expect(run.code).toBe(2);
    expect(run.stderr).toContain(message);
    expect(run.stdout).toBe('');
  });

  it('returns instead of exiting the process, and leaves process.exitCode alone', async () => {
    const before = process.exitCode;

    const code = await main(['node', 'kbsync', 'nope'], { stdout: { write: () => true }, stderr: { write: () => true } });

    expect(code).toBe(2);
    expect(process.exitCode).toBe(before);
  });
});

describe('exit.ts: errors to text and exit codes', () => {
  function capture(env: Record<string, string> = {}): { ctx: ReturnType<typeof createContext>; out: () => string; err: () => string } {
    let out = '';
    let err = '';
    const ctx = createContext({ stdout: { write: (t: string) => (out += t) }, stderr: { write: (t: string) => (err += t) }, env });
    return { ctx, out: () => out, err: () => err };
  }

  it.each([
    ['usage', EXIT.usage],
    ['config_not_found', EXIT.usage],
    ['unauthorized', EXIT.refused],
    ['insufficient_credits', EXIT.refused],
    ['tier_required', EXIT.refused],
    ['forbidden', EXIT.refused],
    ['budget_exhausted', EXIT.stopped],
    ['network', EXIT.itemsFailed],
    ['state_locked', EXIT.usage],
  ] as const)('maps %s to exit %i with the message and a hint', (code, exit) => {
    const { ctx, err } = capture();

    const result = reportError(new KbsyncError(code, 'something happened'), ctx, { json: false });

    expect(result).toBe(exit);
    expect(err()).toMatch(/^kbsync: something happened\n {2}\S.*\n$/);
  });

  it('reports an unexpected error as internal (5): short message, "please report", no stack', () => {
    const { ctx, err } = capture();

    const result = reportError(new TypeError('x is undefined'), ctx, { json: false });

    expect(result).toBe(EXIT.internal);
    expect(err()).toContain('kbsync: internal error: x is undefined');
    expect(err()).toContain('please report it');
    expect(err()).not.toContain('    at ');
  });

  it('adds the stack and causes with KBSYNC_DEBUG=1', () => {
    const { ctx, err } = capture({ KBSYNC_DEBUG: '1' });

    reportError(new KbsyncError('network', 'cannot reach the service', { cause: new Error('ECONNREFUSED 127.0.0.1:1') }), ctx, {
      json: false,
    });

    expect(err()).toContain('    at ');
    expect(err()).toContain('caused by: Error: ECONNREFUSED 127.0.0.1:1');
  });

  it('prints one JSON error document on stdout in --json mode', () => {
    const { ctx, out } = capture();

    reportError(new KbsyncError('budget_exhausted', 'budget reached'), ctx, { json: true });

    expect(JSON.parse(out())).toEqual({ error: { code: 'budget_exhausted', exitCode: 3, message: 'budget reached' } });
  });
});

describe('exitCodeForRun', () => {
  it.each([
    [{ failed: 0, deferred: 0 }, 0],
    [{ failed: 2, deferred: 0 }, 1],
    [{ failed: 0, deferred: 5 }, 3],
    [{ failed: 1, deferred: 5 }, 1],
  ])('%o → %i', (summary, code) => {
    expect(exitCodeForRun(summary)).toBe(code);
  });
});
