import * as z from 'zod';
import { stateLocationProblem } from '../shared/state-url.js';
import { PLANS } from '../shared/plans.js';
import { webhookSecretKey } from '../shared/webhooks.js';
import { cronProblem } from '../shared/cron.js';
import { isRecord } from './is-record.js';
import { Limits } from './limits-schema.js';
import { CONVERT_TYPES } from '../shared/file-types.js';

/**
 * The kbsync.yaml schema: the single source of the config types, of docs/config.md and of
 * kbsync.schema.json. Each key's `.describe()` text is its one description (reference.ts and
 * json-schema.ts render it, editors show it from kbsync.schema.json); its default is its `.default()`.
 * A key carries no TSDoc of its own: reference.test.ts fails on one.
 * Every object is strict: an unknown key is an error, so a typo never passes silently.
 */

// Refinements normally skip a value that already has an issue; reporting every problem at once
// needs them to run whenever the value is at least an object.
const always = { when: (payload: { value: unknown }) => isRecord(payload.value) };

const NonNegativeInt = z.number().int().nonnegative();

/** Document types converted to Markdown before upload. */
const ConvertList = z.array(z.enum(CONVERT_TYPES));

export const Dialect = z
  .strictObject({
    v1Prefix: z
      .string()
      .startsWith('/')
      .default('/api/v1/ext')
      .describe('Path prefix of the v1 endpoints (the hosted service also answers under /api/platform/ext).'),
    v2Prefix: z.string().startsWith('/').default('/api/v2/ext').describe('Path prefix of the v2 endpoints.'),
    authHeader: z.string().min(1).default('X-API-Key').describe('Header carrying the raw API key.'),
    uploadField: z.string().min(1).default('file').describe('Multipart field name of the uploaded file.'),
  })
  .prefault({});
export type Dialect = z.infer<typeof Dialect>;

/**
 * How the service prices an upload: what the plan, every budget check and every reservation count.
 * docs/api.md states `5 + 1 per started MiB over 5 MiB`; the hosted docs state `5 credits + 1 per MB`
 * (`includedMiB: 0`). A charge above it stops the run's spending (exit 3).
 */
export const UploadCost = z
  .strictObject({
    base: NonNegativeInt.default(5).describe('Credits of any upload.'),
    perMiB: NonNegativeInt.default(1).describe('Credits per started MiB over includedMiB.'),
    includedMiB: NonNegativeInt.default(5).describe("MiB the base price covers (the hosted docs' formula is 0)."),
  })
  .prefault({});

export const Target = z
  .strictObject({
    kind: z
      .enum(['embedded', 'remote'])
      .default('embedded')
      .describe('`embedded` runs the local service in-process; `remote` talks to baseUrl.'),
    baseUrl: z
      .url({ protocol: /^https?$/ })
      .optional()
      .describe('Base URL of the remote service (remote only).'),
    apiKey: z.string().min(1).optional().describe('API key (remote only). Prefer `${KBSYNC_API_KEY}` or apiKeyFile; never commit a key.'),
    apiKeyFile: z.string().min(1).optional().describe('Path of a file (mode 0600) holding the API key (remote only).'),
    plan: z.enum(PLANS).default('basic').describe("The dataset's plan: sets file-size limits and which operations are available."),
    datasetId: z
      .union([z.string().min(1), z.number().int().positive().transform(String)])
      .optional()
      .describe('Dataset id; sent as `dataset_id` on every call when set (needed with global keys).'),
    dialect: Dialect.describe('Path prefixes, auth header and upload field of the remote service (remote only).'),
    dataDir: z.string().min(1).default('.kbsync/service').describe('Where the embedded service keeps its data (embedded only).'),
    startCredits: NonNegativeInt.default(1000).describe(
      'Credits the embedded dataset starts with, when its data folder is first created (embedded only); later, add credits with `kbsync serve credits add`.',
    ),
    uploadCost: UploadCost.describe('What an upload costs, as the service charges it (docs/api.md: 5 + 1 per started MiB over 5 MiB).'),
  })
  .prefault({});
export type Target = z.infer<typeof Target>;

export const Budget = z
  .strictObject({
    maxCreditsPerRun: NonNegativeInt.default(500).describe('Most credits one run may spend.'),
    maxCreditsPerDay: NonNegativeInt.default(2000).describe('Most credits per UTC day.'),
    maxCreditsPerMonth: NonNegativeInt.default(20000).describe('Most credits per UTC calendar month.'),
  })
  .prefault({});
export type Budget = z.infer<typeof Budget>;

export const GitSource = z.strictObject({
  url: z.string().min(1).describe('Clone URL (https, ssh, or a local path).'),
  ref: z.string().min(1).default('HEAD').describe('Branch, tag or commit to sync.'),
  subdir: z.string().min(1).optional().describe('Only files under this folder of the repo.'),
  pollSeconds: z.number().int().positive().default(300).describe('How often `watch` fetches the remote, in seconds.'),
});
export type GitSource = z.infer<typeof GitSource>;

export const Source = z
  .strictObject({
    // Not "." or "..": the name is a folder of the state dir (a git checkout) and a remote name prefix.
    name: z
      .string()
      .regex(/^[A-Za-z0-9._-]+$/, 'use letters, digits, ".", "_" or "-"')
      .refine(
        (name) => /[^.]/.test(name),
        'a name of dots only ("." or "..") would name a folder above the checkout; use letters or digits too',
      )
      .describe('A short unique name; prefixes remote file names when there are several sources.'),
    path: z.string().min(1).optional().describe('A folder to sync (relative to the config file). Exactly one of path and git.'),
    git: GitSource.optional().describe('A Git repository to sync. Exactly one of path and git.'),
    include: z.array(z.string().min(1)).default(['**/*']).describe('Globs of files to include.'),
    exclude: z.array(z.string().min(1)).default([]).describe('Globs of files to leave out.'),
    followSymlinks: z
      .boolean()
      .default(false)
      .describe(
        'Follow symbolic links that stay inside the source root. A target is held to the rules of its own path: never in .git/ or node_modules/, named like a secret, ignored or excluded (in a git source: only files git tracks).',
      ),
    convert: ConvertList.optional().describe(
      'Document types of this source converted to Markdown before upload, instead of the top-level `convert` (`[]`: none).',
    ),
    as: z
      .enum(['files', 'intelligence'])
      .optional()
      .describe(
        '`files` uploads each file; `intelligence` turns each record of its JSONL/JSON/YAML/CSV files and each heading section of its Markdown files into an intelligence entry of `agent` (1 credit per new entry, nothing when unchanged); `files` when unset.',
      ),
    agent: z
      .union([z.string().min(1), z.number().int().positive().transform(String)])
      .optional()
      .describe('The agent id the entries are written for (`as: intelligence` only; required there).'),
    contentField: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The field of a JSONL/JSON/YAML record, or the CSV column, that holds an entry's text (`as: intelligence` only; `content` when unset).",
      ),
    ensureSelfLearning: z
      .boolean()
      .optional()
      .describe(
        "When the agent's attachment to the dataset is `read_only` (or missing), switch it to `self_learning` instead of stopping (`as: intelligence` only; false when unset).",
      ),
  })
  .superRefine((s, ctx) => {
    if ((s.path === undefined) === (s.git === undefined)) {
      ctx.addIssue({ code: 'custom', message: 'give exactly one of "path" or "git"', path: [] });
    }
    if (s.as === 'intelligence') {
      if (s.agent === undefined)
        ctx.addIssue({ code: 'custom', message: 'required when as is intelligence (an agent id)', path: ['agent'] });
    } else {
      for (const key of ['agent', 'contentField', 'ensureSelfLearning'] as const) {
        if (s[key] !== undefined) ctx.addIssue({ code: 'custom', message: 'only for a source with as: intelligence', path: [key] });
      }
    }
  }, always);
export type Source = z.infer<typeof Source>;

export const Upload = z
  .strictObject({
    concurrency: z.number().int().min(1).max(64).default(4).describe('Uploads in flight at once.'),
    requestsPerSecond: z
      .number()
      .positive()
      .max(1000)
      .default(5)
      .describe('Most paid requests started in any rolling second, for the whole run (a fraction above 1 rounds down).'),
    maxRetryAfterSeconds: z
      .number()
      .int()
      .min(1)
      .max(86_400)
      .default(60)
      .describe(
        'Longest `Retry-After` (after a 429) a run waits out, pausing the calls to that endpoint; a longer one stops the run (exit 3), the rest queued.',
      ),
    maxReprocessAttempts: NonNegativeInt.default(2).describe(
      "How many times a file whose remote processing failed is reprocessed (never when the service's error says the same file would fail again: docs/api.md).",
    ),
  })
  .prefault({});

export const Reindex = z
  .strictObject({
    minChangedFiles: z
      .number()
      .int()
      .positive()
      .default(20)
      .describe('A run that changes at least this many files ends with one reindex (Advanced tier only).'),
  })
  .prefault({});

export const Watch = z
  .strictObject({
    debounceMs: NonNegativeInt.default(1500).describe('Quiet time after the last change before a sync starts.'),
    rescanMinutes: z
      .number()
      .positive()
      .default(60)
      .describe('Full safety-net rescan period: a sync whose walk finds what the watcher missed, this long after the last one.'),
    backend: z
      .enum(['auto', 'events', 'polling'])
      .default('auto')
      .describe(
        'How `watch` sees changes: `auto` (file-system events, checked at start by a probe file, polling when none arrives or the watch fails), `events` (file-system events, no probe), `polling` (stat every file each `pollIntervalMs`: network mounts, some Docker and WSL2 mounts).',
      ),
    watcher: z
      .enum(['node', 'parcel', 'chokidar'])
      .default('node')
      .describe(
        "Which library delivers file-system events (`backend: auto` or `events`): `node` (Node's fs.watch on each folder: one inotify watch per folder and no thread of its own, so an idle daemon does not wake for it), `parcel` (@parcel/watcher: one watch per folder, but its thread wakes twice a second) or `chokidar` (one watch per file: several times the memory and start time on a large tree; docs/benchmarks.md). Polling is chokidar's either way.",
      ),
    pollIntervalMs: z.number().int().min(50).default(1000).describe('How often the polling backend stats each file, in milliseconds.'),
    probeTimeoutMs: z
      .number()
      .int()
      .positive()
      .default(2000)
      .describe('How long the start-up probe waits for the event of the file it writes (`backend: auto`) before it falls back to polling.'),
    shutdownGraceSeconds: z
      .number()
      .positive()
      .default(10)
      .describe(
        'At SIGTERM or SIGINT, how long paid calls in flight may take to finish before kbsync exits anyway (their outcome is then settled by the next start).',
      ),
    schedule: z
      .string()
      .nullable()
      .default(null)
      .refine((expr) => expr === null || cronProblem(expr) === null, {
        error: (issue) => cronProblem(String(issue.input)) ?? 'not a cron expression',
      })
      .describe(
        'A cron expression (5 fields, in UTC) of the minutes in which `watch` may sync, e.g. `* 22-23,0-5 * * *`: a cycle due outside them (changes, a rescan, a git poll, the first sync) waits for the next open minute. Unset means always.',
      ),
    webhookSecret: z
      .string()
      .nullable()
      .default(null)
      .refine(
        (secret) => secret === null || (/^whsec_[A-Za-z0-9+/]+={0,2}$/.test(secret) && webhookSecretKey(secret) !== null),
        'a Standard Webhooks secret: `whsec_` followed by base64 (the `secret` the service returned when the webhook was created)',
      )
      .describe(
        'The signing secret (`whsec_...`) of the webhooks that `watch --http` accepts on POST /webhooks; write `${KBSYNC_WEBHOOK_SECRET}` rather than the secret itself. Unset means POST /webhooks answers 404.',
      ),
    httpToken: z
      .string()
      .min(16, 'at least 16 characters (for example: openssl rand -hex 24)')
      .nullable()
      .default(null)
      .describe(
        'The token the status page of `watch --http` (`/` and `/api/*`) asks for: required when --http is bound to an address other than loopback, and whenever it is set; write `${KBSYNC_HTTP_TOKEN}` (the variable is also read when this is unset). At least 16 characters. /healthz, /readyz and /metrics never ask for it.',
      ),
  })
  .prefault({});

export { Limits } from './limits-schema.js';

export const Config = z
  .strictObject({
    target: Target.describe('Where documents go: the embedded service or a remote one.'),
    state: z
      .string()
      .min(1)
      .superRefine((state, ctx) => {
        const problem = stateLocationProblem(state);
        if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
      })
      .default('.kbsync/state.db')
      .describe('Path of the sync state database (SQLite), or a postgres:// URL of the state shared by many runners (docs/scale.md).'),
    budget: Budget.describe('Credit caps; work over a cap waits for the next run, day or month.'),
    convert: ConvertList.default([]).describe(
      "Document types converted to Markdown before upload, in every source (a source's own `convert` overrides it): pdf, pptx, doc, odt, ods, odp, rtf, epub. Each converted file is priced and uploaded as its Markdown, named `<path>.md`.",
    ),
    sources: z.array(Source).default([]).describe('Folders and Git repositories to sync.'),
    upload: Upload.describe('How uploads are paced.'),
    reindex: Reindex.describe('When a run ends with a reindex.'),
    watch: Watch.describe('Timing of `kbsync watch`.'),
    limits: Limits.describe("Size limits on top of the plan's."),
  })
  .superRefine((c, ctx) => {
    const sources: unknown[] = Array.isArray(c.sources) ? c.sources : [];
    const seen = new Map<string, number>();
    sources.forEach((s, i) => {
      if (!isRecord(s) || typeof s.name !== 'string') return;
      const first = seen.get(s.name);
      if (first !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['sources', i, 'name'], message: `duplicate source name (also sources[${first}].name)` });
      } else {
        seen.set(s.name, i);
      }
    });
    const target: unknown = c.target;
    if (isRecord(target) && target.kind === 'remote') {
      if (target.baseUrl === undefined)
        ctx.addIssue({ code: 'custom', path: ['target', 'baseUrl'], message: 'required when target.kind is remote' });
      if (target.apiKey === undefined && target.apiKeyFile === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['target', 'apiKey'],
          message: 'required when target.kind is remote (or set target.apiKeyFile)',
        });
      }
      if (target.apiKey !== undefined && target.apiKeyFile !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['target', 'apiKeyFile'], message: 'give apiKey or apiKeyFile, not both' });
      }
    }
  }, always);
/** What the user wrote (before defaults). */
export type ConfigInput = z.input<typeof Config>;
/** The validated config with defaults applied. Paths are still as written (see ResolvedConfig). */
export type Config = z.infer<typeof Config>;

/**
 * The config the rest of kbsync uses: paths made absolute against the config file's folder,
 * the API key read from apiKeyFile when given, and the file it came from.
 */
export type ResolvedConfig = Config & {
  /** Absolute path of the config file. */
  configPath: string;
  /** Absolute folder of the config file: relative paths in it are relative to this. */
  baseDir: string;
};
