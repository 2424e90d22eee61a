import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Database } from 'better-sqlite3';
import { PLANS, type Plan } from '../shared/plans.js';
import { hashApiKey, keyPrefix, newApiKey } from './keys.js';
import { ServiceError, notFound } from './service-error.js';
import { datasetIdOfKeyHash, insertApiKey } from './store/api-keys.js';
import { openServiceDb } from './store/db.js';
import { countDatasets, getDataset, insertDataset, setDatasetPlan } from './store/datasets.js';
import { applyCredits } from './store/ledger.js';
import { isoAt } from './store/time.js';
import { writeTransaction } from './store/write-transaction.js';
import { SERVICE_DB_FILE } from '../shared/service-db.js';

/** Operations the spec has no endpoint for: datasets, keys and credits (used by the CLI and embedded mode). */
export type ServiceAdmin = {
  /** Creates a dataset with a plan and a starting balance, and a key for it (the only time the key is shown). */
  createDataset(b: { name: string; plan: Plan; credits: number }): { datasetId: string; apiKey: string };
  /** Adds credits to a dataset; returns the new balance. */
  addCredits(datasetId: string, credits: number): number;
  /** Changes a dataset's plan. */
  setPlan(datasetId: string, plan: Plan): void;
  /** The dataset a key belongs to, or undefined for an unknown key. */
  datasetOfKey(apiKey: string): string | undefined;
  /** How many datasets exist (0 on a fresh data dir). */
  datasetCount(): number;
};

function datasetIdFrom(value: string): number {
  if (!/^[1-9][0-9]{0,15}$/.test(value)) throw notFound('dataset');
  return Number(value);
}

/** The admin operations over an open service database. */
export function createAdmin(db: Database, clock: () => number = Date.now): ServiceAdmin {
  return {
    createDataset({ name, plan, credits }) {
      if (!PLANS.includes(plan)) throw new ServiceError('invalid_request', `plan: one of ${PLANS.join(', ')}`);
      if (!Number.isSafeInteger(credits) || credits < 0) throw new ServiceError('invalid_request', 'credits: a non-negative integer');
      if (name.trim() === '') throw new ServiceError('invalid_request', 'name: required');
      const apiKey = newApiKey();
      const now = isoAt(clock());
      const datasetId = writeTransaction(db, () => {
        const id = insertDataset(db, { name, plan, credits: 0, createdAt: now });
        if (credits > 0) applyCredits(db, { datasetId: id, operation: 'credit_add', delta: credits, ref: null, createdAt: now });
        insertApiKey(db, { datasetId: id, keyHash: hashApiKey(apiKey), prefix: keyPrefix(apiKey), createdAt: now });
        return id;
      })();
      return { datasetId: String(datasetId), apiKey };
    },
    addCredits(datasetId, credits) {
      if (!Number.isSafeInteger(credits) || credits <= 0) throw new ServiceError('invalid_request', 'credits: a positive integer');
      const id = datasetIdFrom(datasetId);
      return writeTransaction(db, () => {
        if (getDataset(db, id) === undefined) throw notFound('dataset');
        return applyCredits(db, { datasetId: id, operation: 'credit_add', delta: credits, ref: null, createdAt: isoAt(clock()) });
      })();
    },
    setPlan(datasetId, plan) {
      const id = datasetIdFrom(datasetId);
      if (getDataset(db, id) === undefined) throw notFound('dataset');
      setDatasetPlan(db, id, plan);
    },
    datasetOfKey(apiKey) {
      const id = datasetIdOfKeyHash(db, hashApiKey(apiKey));
      return id === undefined ? undefined : String(id);
    },
    datasetCount() {
      return countDatasets(db);
    },
  };
}

/** Opens a data dir's database for admin work without serving HTTP (the CLI's `serve dataset` and `serve credits`). */
export function openServiceAdmin(dataDir: string): { admin: ServiceAdmin; close(): void } {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const db = openServiceDb(join(dir, SERVICE_DB_FILE));
  return { admin: createAdmin(db), close: () => db.close() };
}
