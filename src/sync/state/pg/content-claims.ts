import type { Db } from './db.js';
import type { PgIdentity, PgOpRow } from './outbox.js';
import { liveRunners } from './runs.js';

/** A copy another runner of the dataset bought already: the upload is tracked against it. */
export type Reuse = { remoteId: string; remoteName: string };

/**
 * The content claims (`content_claims`, PostgreSQL only): one row per SHA-256 bought or being bought for
 * the dataset, so that runners sharing it buy each content once. Called inside the budget's transactions.
 */
export function createPgContentClaims(db: Db, me: PgIdentity) {
  /** True while the runner's process holds its liveness lock (see registerRunner). */
  const runnerAlive = async (runnerId: number | null): Promise<boolean> => {
    if (runnerId === null) return false;
    if (runnerId === me.runnerId) return true;
    return (await liveRunners(db, [runnerId])).has(runnerId);
  };
  return {
    /** An upload's content claim: null when this op holds it now; else the copy to reuse, or 'busy' while another op buys it. */
    async claim(op: PgOpRow): Promise<Reuse | 'busy' | 'orphaned' | null> {
      const at = db.nowMs();
      const mine = await db.q<{ op_id: number }>(
        `INSERT INTO content_claims (sha256, op_id, runner_id, state, claimed_at) VALUES (decode($1, 'hex'), $2, $3, 'claimed', $4)
       ON CONFLICT (sha256) DO NOTHING RETURNING op_id`,
        [op.sha256, op.id, me.runnerId, at],
      );
      if (mine.length > 0) return null;
      const rows = await db.q<{
        op_id: number;
        runner_id: number | null;
        state: string;
        remote_id: string | null;
        remote_name: string | null;
      }>(`SELECT op_id, runner_id, state, remote_id, remote_name FROM content_claims WHERE sha256 = decode($1, 'hex') FOR UPDATE`, [
        op.sha256,
      ]);
      const held = rows[0];
      if (held === undefined || held.op_id === op.id) return null;
      if (held.state === 'done' && held.remote_id !== null)
        return { remoteId: held.remote_id, remoteName: held.remote_name ?? held.remote_id };
      return (await runnerAlive(held.runner_id)) ? 'busy' : 'orphaned';
    },
    /** The op's upload is done: its content is the dataset's, as `remoteId` named `name`. */
    async bought(op: PgOpRow, remoteId: string | null, name: string, at: number): Promise<void> {
      await db.run(
        `INSERT INTO content_claims (sha256, op_id, runner_id, state, remote_id, remote_name, claimed_at)
           VALUES (decode($1, 'hex'), $2, $3, 'done', $4, $5, $6)
         ON CONFLICT (sha256) DO UPDATE SET state = 'done', remote_id = excluded.remote_id, remote_name = excluded.remote_name, op_id = excluded.op_id`,
        [op.sha256, op.id, me.runnerId, remoteId, name, at],
      );
    },
    /** The op gives its claim up (refused over a cap, or failed): another op may buy the content. */
    async release(opId: number): Promise<void> {
      await db.run(`DELETE FROM content_claims WHERE op_id = $1 AND state = 'claimed'`, [opId]);
    },
  };
}
