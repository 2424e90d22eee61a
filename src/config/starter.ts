/**
 * The commented starter kbsync.yaml that `kbsync init` writes: every key, with its default and a
 * comment; remote-only keys commented out. starter.test.ts checks it loads and names every key.
 */
export const STARTER_CONFIG = `# kbsync configuration: what to sync, where to, and how much it may spend.
# Reference: docs/config.md in the kbsync repository. Check this file with: kbsync config check
#
# Any string value may use \${VAR} or \${VAR:-default} from the environment ($\${ is a literal \${).
# Relative paths are relative to this file's folder.

# Where documents go.
target:
  # embedded: run the knowledge service inside kbsync (offline, no account; data in dataDir).
  # remote: a hosted service at baseUrl (set the remote-only keys below).
  kind: embedded
  # The dataset's plan: free | basic | pro | team | enterprise. Sets the largest file accepted
  # (100 MB on free/basic, 500 MB above) and whether a reindex is available (pro and above).
  plan: basic
  # Where the embedded service keeps its database and files (embedded only).
  dataDir: .kbsync/service
  # Credits the embedded dataset starts with, when dataDir is first created (embedded only).
  # Later: kbsync serve credits add --data DATADIR --dataset ID N
  startCredits: 1000
  # --- remote only ---------------------------------------------------------------------
  # Base URL of the service.
  # baseUrl: https://app.inflectiv.ai
  # The API key: from the environment (never write the key itself in this file)...
  # apiKey: \${KBSYNC_API_KEY}
  # ...or from a file only you can read (chmod 600 FILE).
  # apiKeyFile: ~/.config/kbsync/api-key
  # The dataset id, needed with a global key (inf_global_...); sent as dataset_id.
  # datasetId: "7519"
  # Only if the service differs from the published API: path prefixes, auth header, upload field.
  # dialect:
  #   v1Prefix: /api/v1/ext
  #   v2Prefix: /api/v2/ext
  #   authHeader: X-API-Key
  #   uploadField: file
  # How the service prices an upload, as docs/api.md states it. The hosted docs state "5 credits + 1 per
  # MB" (includedMiB: 0); a charge above this stops the run's spending.
  # uploadCost:
  #   base: 5
  #   perMiB: 1
  #   includedMiB: 5

# The sync state database: tracked files, pending work and the credit ledger.
state: .kbsync/state.db

# Credit caps. Work over a cap waits for the next run, UTC day or UTC month.
budget:
  maxCreditsPerRun: 500
  maxCreditsPerDay: 2000
  maxCreditsPerMonth: 20000

# Documents the service does not take, converted to Markdown here before upload and priced as
# that Markdown (an upload each: 5 credits, 1 more per MiB over 5 MiB); a document whose text did
# not change costs nothing again. Remove a type (or write convert: []) to leave those files out.
convert: [pdf, pptx, doc, odt, ods, odp, rtf, epub]

# What to sync: folders (path) or Git repositories (git), each with a unique name.
sources:
  - name: docs
    # A folder, relative to this file. kbsync init creates it when missing.
    path: ./docs
    # Globs (relative to the folder) of files to include and to leave out. .gitignore and
    # .kbsyncignore rules also apply; secrets (.env, *.pem, *.key...) are never uploaded.
    include: ["**/*"]
    exclude: []
    # Follow symbolic links that stay inside the folder (a target is held to the same rules).
    followSymlinks: false
    # The document types this source converts, instead of the top-level list (e.g. only PDFs).
    # convert: [pdf]
  # A Git repository: url, branch/tag/commit, a folder inside it, how often watch fetches it.
  # - name: handbook
  #   git:
  #     url: https://github.com/your-org/handbook.git
  #     ref: main
  #     subdir: content
  #     pollSeconds: 300
  # Small facts as intelligence entries of an agent (1 credit per new entry, nothing when unchanged):
  # one per record of .jsonl/.json/.yaml/.csv files, one per heading section of .md files.
  # - name: faq
  #   path: ./faq
  #   as: intelligence
  #   agent: 1
  #   # The record field (or CSV column) holding the text.
  #   contentField: content
  #   # Switch the agent's dataset from read_only to self_learning instead of stopping.
  #   ensureSelfLearning: false

# How uploads are paced.
upload:
  # Uploads in flight at once (1-64).
  concurrency: 4
  # Most paid requests started in any rolling second (uploads, reprocesses and the reindex together).
  requestsPerSecond: 5
  # After a 429, the calls to that endpoint pause for its Retry-After; one longer than this many
  # seconds stops the run (exit 3) with the rest queued for the next run.
  maxRetryAfterSeconds: 60
  # How many times a file whose remote processing failed is reprocessed.
  maxReprocessAttempts: 2

# A run that changes at least this many files ends with one reindex (pro plans and above).
reindex:
  minChangedFiles: 20

# kbsync watch: quiet time after the last change before a sync, and the safety-net rescan period.
# backend: auto (file-system events, checked by a probe at start, polling if none arrives), events,
# or polling (network mounts, some Docker and WSL2 mounts; every pollIntervalMs); watcher: node (one
# inotify watch per folder, no thread), parcel or chokidar (one per file) for the events. At SIGTERM, calls
# in flight get shutdownGraceSeconds to finish. schedule: a cron expression (UTC) of the minutes in
# which syncs may run, e.g. "* 22-23,0-5 * * *"; null means any time. webhookSecret: the whsec_ secret
# of the webhooks that watch --http accepts on POST /webhooks (write \${KBSYNC_WEBHOOK_SECRET}, not the secret).
# httpToken: the token of the status page at / when --http is not loopback (write \${KBSYNC_HTTP_TOKEN}).
watch:
  debounceMs: 1500
  rescanMinutes: 60
  backend: auto
  watcher: node
  pollIntervalMs: 1000
  probeTimeoutMs: 2000
  shutdownGraceSeconds: 10
  schedule: null
  webhookSecret: null
  httpToken: null

# Largest file to upload, in bytes; null means the plan's limit. A document's conversion is
# stopped past its time (seconds) or memory (MB) limit, and the file skipped until it changes.
limits:
  maxFileBytes: null
  convertSeconds: 120
  convertMemoryMb: 512
`;
