import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, ensureDist } from '../../helpers/build-dist.js';
import { spawnKbsync, type ChildExit } from '../../helpers/kbsync-child.js';

/**
 * README, "Agents and chat": its commands, taken from the README as written, run in order as real child
 * processes (`node bin/kbsync.js`) from an empty temp folder, as a new user would: init, a document into
 * ./docs, sync, create an agent, attach the dataset, chat with the agent by its name. The answer must come
 * from the document, and name it by its path.
 */

/** The README's `npx kbsync ...` lines of that section, as argument lists (comments dropped, "..." kept whole). */
function readmeCommands(): string[][] {
  const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Agents and chat'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/\s+#[^"]*$/, '').trim())
    .filter((line) => line.startsWith('npx kbsync '))
    .map((line) => [...line.matchAll(/"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? '').slice(2));
}

const DOC = '# Expenses\n\nEvery expense over 500 EUR needs the approval of your manager, given within two working days.\n';

let root = '';
const runs: { args: string[]; exit: ChildExit }[] = [];

beforeAll(async () => {
  await ensureDist();
  root = mkdtempSync(join(tmpdir(), 'kbsync-agents-readme-'));
  for (const args of readmeCommands()) {
    const exit = await spawnKbsync(args, root).exited;
    runs.push({ args, exit });
    if (exit.code !== 0) break;
    // "put your documents there": what the user does after init.
    if (args[0] === 'init') writeFileSync(join(root, 'docs', 'expenses.md'), DOC);
  }
}, 180_000);

afterAll(() => {
  if (root !== '') rmSync(root, { recursive: true, force: true });
});

describe('README: agents create, datasets attach, chat by name, from an empty folder', () => {
  it('the README shows init, sync, agents create docs-helper, agents datasets docs-helper attach, chat docs-helper', () => {
    expect(readmeCommands().map((args) => args.slice(0, 3).join(' '))).toEqual([
      'init',
      'sync --wait',
      'agents create docs-helper',
      'agents datasets docs-helper',
      'chat docs-helper Who approves an expense over 500 EUR?',
    ]);
  });

  it('every command exits 0, in order', () => {
    expect(runs.map((r) => [r.args.slice(0, 2).join(' '), r.exit.code, r.exit.code === 0 ? '' : r.exit.stderr])).toEqual([
      ['init', 0, ''],
      ['sync --wait', 0, ''],
      ['agents create', 0, ''],
      ['agents datasets', 0, ''],
      ['chat docs-helper', 0, ''],
    ]);
  });

  it('create says what it made and cost; attach names the dataset and its mode', () => {
    expect(runs[2]?.exit.stdout).toMatch(/^created agent docs-helper \(id \d+\): 5 credits\n {2}attached to dataset \d+ \(read_only\)\n/);
    expect(runs[3]?.exit.stdout).toMatch(/^dataset \d+ is attached to agent docs-helper \(id \d+\), in read_only mode\n$/);
  });

  it('chat docs-helper answers from the document and names it by its path', () => {
    const chat = runs[4]?.exit.stdout ?? '';
    expect(chat).toMatch(/manager/i);
    expect(chat).toMatch(/\nsources:\n {2}expenses\.md chunk 0 \(score \d\.\d{3}\)( {2}from "[^"]+")?\n/);
  });
});
