import { randomBytes } from 'node:crypto';
import { appendFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileMultipart } from '../../src/client/multipart.js';

const dir = mkdtempSync(join(tmpdir(), 'kbsync-multipart-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function bodyOf(open: () => AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of open()) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('fileMultipart', () => {
  it("sends exactly the size it stat'ed, even if the file grows before it is read: the upload (and its price) cannot grow", async () => {
    const content = randomBytes(700 * 1024 + 13);
    const path = join(dir, 'growing.bin');
    writeFileSync(path, content);
    const body = await fileMultipart(path, 'growing.bin', 'file', content.length);
    appendFileSync(path, randomBytes(300 * 1024));

    const sent = await bodyOf(body.open);

    expect(sent.length).toBe(body.length);
    expect(sent.includes(content)).toBe(true);
  });

  it('ends short when the file shrinks before it is read (undici then refuses the request: not sent)', async () => {
    const path = join(dir, 'shrinking.bin');
    writeFileSync(path, randomBytes(64 * 1024));
    const body = await fileMultipart(path, 'shrinking.bin', 'file', 64 * 1024);
    truncateSync(path, 1024);

    const sent = await bodyOf(body.open);

    expect(sent.length).toBe(body.length - 63 * 1024);
  });

  it('refuses, naming the file, when its size is not the one the caller hashed', async () => {
    const path = join(dir, 'other.md');
    writeFileSync(path, 'twelve bytes');

    await expect(fileMultipart(path, 'other.md', 'file', 11)).rejects.toMatchObject({
      code: 'file_changed',
      message: expect.stringContaining(path),
    });
    await expect(fileMultipart(path, 'other.md', 'file', 12)).resolves.toMatchObject({ length: expect.any(Number) });
  });
});
