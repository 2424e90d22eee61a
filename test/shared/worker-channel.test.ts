import { MessageChannel } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { KbsyncError } from '../../src/shared/errors.js';
import { channel } from '../../src/shared/worker-channel.js';
import { startWorker } from '../../src/shared/worker-entry.js';
import type { TestApi } from './fixtures/channel-worker.js';

const ENTRY = new URL('./fixtures/channel-worker.ts', import.meta.url);
const open = () => channel<TestApi>(startWorker(ENTRY), { name: 'test worker' });

describe('worker channel', () => {
  it('answers concurrent calls by id, in whatever order the worker finishes them', async () => {
    const ch = open();
    const order: number[] = [];
    const calls = [300, 10, 150, 0].map((ms, n) => ch.call('echo', { n, ms }).then((r) => (order.push(r), r)));
    expect(ch.waiting).toBe(4);

    expect(await Promise.all(calls)).toEqual([0, 1, 2, 3]);
    expect(order).toEqual([3, 1, 2, 0]);
    expect(ch.waiting).toBe(0);
    await ch.close();
  });

  it('rejects a call whose handler throws with the error name, message and code, a KbsyncError staying one', async () => {
    const ch = open();
    const plain = await ch.call('fail', { kbsync: false }).catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(Error);
    expect(plain).toMatchObject({ name: 'TypeError', message: 'no such thing', code: 'ENOENT' });
    const coded = await ch.call('fail', { kbsync: true }).catch((e: unknown) => e);
    expect(coded).toBeInstanceOf(KbsyncError);
    expect(coded).toMatchObject({ code: 'parse_failed', message: 'not a spreadsheet' });
    // An answer that cannot be cloned fails its call only.
    await expect(ch.call('uncloneable', undefined)).rejects.toMatchObject({ name: 'DataCloneError' });
    // The worker lives on.
    expect(await ch.call('echo', { n: 5, ms: 0 })).toBe(5);
    await ch.close();
  });

  it('moves an ArrayBuffer to the worker and back when it is listed for transfer', async () => {
    const ch = open();
    const buf = new Uint8Array([1, 2, 3, 4]).buffer;
    const kept = new Uint8Array([9, 9]).buffer;

    const answer = await ch.call('bytes', buf, [buf]);
    expect(answer.length).toBe(4);
    expect(answer.sum).toBe(10);
    expect(buf.byteLength).toBe(0); // moved, not copied
    expect([...new Uint8Array(answer.back)]).toEqual(new Array(16).fill(7));
    expect((await ch.call('bytes', kept)).sum).toBe(18);
    expect(kept.byteLength).toBe(2); // copied: not listed
    await ch.close();
  });

  it('fails every waiting call, naming the worker and the method, when the worker exits mid-call', async () => {
    const ch = open();
    const slow = ch.call('echo', { n: 1, ms: 10_000 });
    const exiting = ch.call('exit', undefined);
    await expect(exiting).rejects.toThrow('the test worker exited (code 3) before it answered exit');
    await expect(slow).rejects.toThrow('the test worker exited (code 3) before it answered echo');
    // Later calls fail at once.
    expect(ch.closed).toBe(true);
    await expect(ch.call('echo', { n: 2, ms: 0 })).rejects.toThrow('the test worker exited (code 3) before it answered echo');
    expect(ch.waiting).toBe(0);
    await ch.close();
  });

  it('fails every waiting call with the error of a worker that crashes', async () => {
    const ch = open();
    const slow = ch.call('echo', { n: 1, ms: 10_000 });
    const crashing = ch.call('crash', undefined);
    await expect(slow).rejects.toThrow('the test worker failed (worker blew up) before it answered echo');
    await expect(crashing).rejects.toThrow('the test worker failed (worker blew up) before it answered crash');
    await ch.close();
  });

  it('fails the waiting calls on close(), with the reason given', async () => {
    const ch = open();
    const slow = expect(ch.call('echo', { n: 1, ms: 10_000 })).rejects.toThrow('given up');
    await ch.close(new Error('given up'));
    await slow;
    await expect(ch.call('echo', { n: 1, ms: 0 })).rejects.toThrow('given up');
  });

  it('settles answers synchronously with take() on a port of its own', async () => {
    const { port1, port2 } = new MessageChannel();
    const worker = startWorker(
      `const { workerData } = process.getBuiltinModule('node:worker_threads');
      workerData.port.on('message', ({ id, req }) => workerData.port.postMessage({ id, ok: true, value: req.n * 2 }));`,
      { workerData: { port: port2 }, transferList: [port2] },
    );
    const ch = channel<TestApi>(worker, { name: 'port worker', port: port1 });
    const got: number[] = [];
    for (let n = 0; n < 3; n++) ch.send('echo', { n, ms: 0 }, (err, value) => got.push(err === null ? (value as number) : -1));
    const until = Date.now() + 10_000;
    while (got.length < 3 && Date.now() < until) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      ch.take(); // the event loop never runs in this loop: only take() can settle them
    }
    expect(got).toEqual([0, 2, 4]);
    await ch.close();
  });
});
