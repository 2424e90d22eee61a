import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDist } from '../../helpers/build-dist.js';
import { createTempDirs, createWorkspace, type Workspace } from '../../helpers/e2e-workspace.js';
import { startDaemon, until, useChildren } from '../../helpers/daemon-children.js';

/*
 * File names with control characters (a newline, a tab: skipped, as no name on the service may hold
 * one) and with a bidirectional override (uploaded) are shown to people escaped, on one line, in every
 * report: plan, sync, explain, status, and the daemon's pretty log.
 */

const temp = createTempDirs();
afterAll(() => temp.cleanup());
beforeAll(() => ensureDist(), 300_000);
const children = useChildren();

const CORRUPT_DOCX = join(import.meta.dirname, '../../fixtures/real/docx/corrupt/tables.truncated.docx');
const NEWLINE = 'line\nbreak.md';
const TAB = 'tab\there.md';
const RTL = 'rtl\u202Edm.txt.md';
const BAD = 'bad\u202Etroper.docx';

function workspace(): Workspace {
  const ws = createWorkspace(temp.make(), { baseUrl: 'http://unused.invalid', apiKey: 'unused' });
  ws.configure({ target: { kind: 'embedded', plan: 'basic', dataDir: '.kbsync/service', startCredits: 1000 } });
  ws.write(NEWLINE, '# Line break\n\nA file whose name holds a newline.\n');
  ws.write(TAB, '# Tab\n\nA file whose name holds a tab.\n');
  ws.write(RTL, '# Right to left\n\nA file whose name holds a bidirectional override.\n');
  ws.write('plain.md', '# Plain\n\nAn ordinary name.\n');
  return ws;
}

/** No raw control character but the line ends, no bidirectional override: each name on its line. */
function expectPrintable(text: string): void {
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
  for (const line of text.split('\n')) expect(line).not.toMatch(/^(break\.md|here\.md)/);
}

describe('names with control characters in the reports for people', () => {
  it('plan, sync, explain and status escape them (quoted, C escapes); --json keeps the exact names', async () => {
    const ws = workspace();
    copyFileSync(CORRUPT_DOCX, join(ws.docs, BAD));

    const plan = await ws.run('plan');
    expect(plan.code, plan.stderr).toBe(0);
    expectPrintable(plan.stdout);
    expect(plan.stdout).toMatch(
      /^skip:unsupported +0 +"line\\nbreak\.md" +unsupported file type: its path holds a control character .*: rename it$/m,
    );
    expect(plan.stdout).toMatch(/^skip:unsupported +0 +"tab\\there\.md" +unsupported file type: its path holds a control character /m);
    expect(plan.stdout).toMatch(/^upload +5 +"rtl\\u\{202e\}dm\.txt\.md" +new file$/m);
    expect(plan.stdout).toMatch(/^upload +5 +plain\.md +new file$/m);
    const json = await ws.runJson('plan');
    expect(json.report.items.map((i) => i.path).sort()).toEqual([BAD, NEWLINE, RTL, TAB, 'plain.md'].sort());

    const sync = await ws.run('sync', '--wait', '--wait-timeout', '60');
    expect(sync.code, sync.stderr).toBe(1);
    expectPrintable(sync.stdout);
    expectPrintable(sync.stderr);
    expect(sync.stdout).toMatch(/^done +upload +5 +"rtl\\u\{202e\}dm\.txt\.md" +new file$/m);
    expect(sync.stdout).toMatch(/^failed +upload +5 +"bad\\u\{202e\}troper\.docx" +/m);

    const explain = await ws.run('explain', NEWLINE);
    expect(explain.code, explain.stderr).toBe(0);
    expectPrintable(explain.stdout);
    expect(explain.stdout.split('\n')[0]).toBe('"docs/line\\nbreak.md"');
    expect(explain.stdout).toMatch(/^ {2}remote: +none yet \(it would be named "line\\nbreak\.md"\)$/m);
    const missing = await ws.run('explain', 'no\tsuch.md');
    expect(missing.stderr).toContain('kbsync: "no\\tsuch.md" is not in any source');

    const status = await ws.run('status');
    expect(status.code, status.stderr).toBe(0);
    expectPrintable(status.stdout);
    expect(status.stdout).toMatch(/^failed processing: +"bad\\u\{202e\}troper\.docx" \(why: kbsync explain FILE/m);
  }, 120_000);

  it("the daemon's pretty log: each file line on one line, the names escaped", async () => {
    const ws = workspace();
    const k = startDaemon(children, ws, [], { KBSYNC_LOG_FORMAT: 'pretty' });
    await until('the first cycle done', () => k.stderrSoFar().includes('sync cycle done'), 60_000);
    k.child.kill('SIGTERM');
    const { code, stderr } = await k.exited;
    expect(code, stderr).toBe(0);

    expectPrintable(stderr);
    const files = stderr.split('\n').filter((l) => / file \{/.test(l));
    expect(files).toHaveLength(4);
    expect(files.some((l) => l.includes('"path":"line\\nbreak.md"'))).toBe(true);
    expect(files.some((l) => l.includes('"path":"tab\\there.md"'))).toBe(true);
    expect(files.some((l) => l.includes('"path":"rtl\\u202edm.txt.md"'))).toBe(true);
  }, 120_000);
});
