import { Option, type Command } from 'commander';
import { resolve } from 'node:path';
import { KbsyncError, isKbsyncError } from '../../shared/errors.js';
import { PLANS, type Plan } from '../../shared/plans.js';
import type { ServiceAdmin } from '../../service/admin.js';
import type { CliContext } from '../context.js';
import { writeJson, writeLines } from '../output.js';
import {
  embeddingsFromEnv,
  listenFailure,
  parseCredits,
  parseLlmUrl,
  parseMaxFileMb,
  parsePort,
  parseRateLimit,
  parseWholeNumber,
} from '../serve-options.js';
import { DEFAULT_PARSE_MEMORY_LIMIT_MB, DEFAULT_PARSE_TIME_LIMIT_MS } from '../../shared/parse-limits.js';

/** Where `kbsync serve` keeps its data unless `--data` says otherwise (the embedded target's default too). */
const DEFAULT_DATA_DIR = '.kbsync/service';
/** What the first start on an empty data dir gives its dataset. */
const FIRST_DATASET = { name: 'default', plan: 'basic' as Plan, credits: 1_000 };

/** Resolves on the first SIGINT or SIGTERM. */
function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((done) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      done(signal);
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

/** Runs an admin action on a data dir's database (no HTTP), mapping "no such dataset" to a usage error. */
async function withAdmin<T>(ctx: CliContext, dataDir: string, action: (admin: ServiceAdmin) => T): Promise<T> {
  const { openServiceAdmin } = await import('../../service/admin.js');
  const opened = openServiceAdmin(resolve(ctx.cwd, dataDir));
  try {
    return action(opened.admin);
  } catch (err) {
    if (isKbsyncError(err, 'not_found', 'invalid_request')) throw new KbsyncError('usage', err.message, { cause: err });
    throw err;
  } finally {
    opened.close();
  }
}

/**
 * `--data` is an option of `serve` alone, and commander lets a command's options stand anywhere after its
 * name: `serve dataset create --data DIR` and `serve --data DIR dataset create` both set it, and the
 * subcommands read it from `serve`. (A `--data` of their own would never be reached: `serve` takes it first.)
 * Given twice with different folders, one would be ignored: refused.
 */
function parseDataDir(value: string, previous: string | undefined): string {
  if (previous !== undefined && previous !== value)
    throw new KbsyncError('usage', `--data given twice ("${previous}", "${value}"): give one data folder`);
  return value;
}

/**
 * Refuses an option the command about to run would ignore: serve's own options other than `--data`
 * (`--port`, `--host`...) on `serve dataset create` or `serve credits add`, and the global
 * `-c/--config` on any `serve` command (none reads a config file).
 */
function refuseUnusedOptions(program: Command, serve: Command, action: Command): void {
  const path = action === serve ? 'serve' : `serve ${action.parent?.name() ?? ''} ${action.name()}`;
  if (program.getOptionValueSource('config') === 'cli') {
    throw new KbsyncError('usage', `-c/--config: "kbsync ${path}" reads no config file; its data folder is --data DIR`);
  }
  if (action === serve) return;
  for (const option of serve.options) {
    const key = option.attributeName();
    if (key === 'data' || serve.getOptionValueSource(key) !== 'cli') continue;
    throw new KbsyncError('usage', `${option.long ?? option.flags} applies to "kbsync serve" itself, not to "kbsync ${path}"`);
  }
}

/** What the help of `serve dataset create` and `serve credits add` says of the global options it lists. */
const SUBCOMMAND_HELP = `
The data folder is serve's --data, given before or after the subcommand's name (default: "${DEFAULT_DATA_DIR}").
serve's other options and -c do not apply here: they are refused (exit 2).`;

/** The data folder `--data` names, or the default. */
function dataDirOf(serve: Command): string {
  return serve.opts<{ data?: string }>().data ?? DEFAULT_DATA_DIR;
}

type ServeOptions = {
  host: string;
  port: number;
  data?: string;
  allowInsecureWebhooks?: boolean;
  rateLimit?: number;
  llmUrl?: string;
  maxFileMb?: Partial<Record<Plan, number>>;
  parseTimeLimit?: number;
  parseMemoryLimit?: number;
  parseWorkers?: number;
};

/** `kbsync serve`: the local knowledge service over HTTP, plus `serve dataset create` and `serve credits add`. */
export function register(program: Command, ctx: CliContext): void {
  const serve: Command = program
    .command('serve')
    .description('run the local knowledge service over HTTP (the spec\'s 22 endpoints); first line: "listening on http://HOST:PORT"')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port (0: any free port)', parsePort, 8787)
    .option(
      '--data <dir>',
      `data folder (service.db and uploaded files), also of serve dataset create and serve credits add, before or after their names (default: "${DEFAULT_DATA_DIR}")`,
      parseDataDir,
    )
    .option('--allow-insecure-webhooks', 'allow http://127.0.0.1 and http://localhost webhook URLs')
    .option('--rate-limit <n/min>', 'requests per minute per API key (429 beyond)', parseRateLimit)
    .option('--llm-url <url>', 'OpenAI-compatible chat-completions server (http or https) for agent chat answers', parseLlmUrl)
    .option(
      '--max-file-mb <plan=N,...>',
      "per-plan upload limits in MB, e.g. team=1000,enterprise=2000 (default: docs/api.md's)",
      parseMaxFileMb,
    )
    .option(
      '--parse-time-limit <seconds>',
      `most CPU time a file's parse may use; past it the file fails parse_failed (default: ${DEFAULT_PARSE_TIME_LIMIT_MS / 1000})`,
      (v) => parseWholeNumber('--parse-time-limit', v, 1, 86_400),
    )
    .option(
      '--parse-memory-limit <mb>',
      `largest JavaScript heap of a file's parse, in MB; past it the file fails parse_failed (default: ${DEFAULT_PARSE_MEMORY_LIMIT_MB})`,
      (v) => parseWholeNumber('--parse-memory-limit', v, 64, 65_536),
    )
    .option('--parse-workers <n>', 'worker threads that parse files, one file each at a time (default: the number of cores)', (v) =>
      parseWholeNumber('--parse-workers', v, 1, 256),
    )
    .hook('preAction', (_serve, action): void => refuseUnusedOptions(program, serve, action))
    .action(async (options: ServeOptions) => {
      const embeddings = embeddingsFromEnv(ctx.env);
      const { startService } = await import('../../service/server.js');
      const logger = await ctx.getLogger();
      const service = await startService({
        dataDir: resolve(ctx.cwd, dataDirOf(serve)),
        host: options.host,
        port: options.port,
        allowInsecureWebhooks: options.allowInsecureWebhooks === true,
        logger,
        ...(options.rateLimit === undefined ? {} : { rateLimitPerMin: options.rateLimit }),
        ...(options.llmUrl === undefined ? {} : { llmUrl: options.llmUrl }),
        ...(embeddings === undefined ? {} : { embeddings }),
        ...(options.maxFileMb === undefined ? {} : { maxFileBytes: options.maxFileMb }),
        ingest: {
          ...(options.parseTimeLimit === undefined ? {} : { timeLimitMs: options.parseTimeLimit * 1000 }),
          ...(options.parseMemoryLimit === undefined ? {} : { memoryLimitMb: options.parseMemoryLimit }),
          ...(options.parseWorkers === undefined ? {} : { workers: options.parseWorkers }),
        },
      }).catch((err: unknown) => {
        throw listenFailure(err, options.host, options.port);
      });
      // Listened for before `listening` is printed: a signal sent as soon as that line shows stops the server.
      const signalled = untilSignal();
      try {
        const first = service.admin.datasetCount() === 0 ? service.admin.createDataset(FIRST_DATASET) : undefined;
        writeLines(ctx, `listening on ${service.url}`);
        if (first !== undefined) {
          writeLines(
            ctx,
            `created dataset ${first.datasetId} (plan ${FIRST_DATASET.plan}, ${FIRST_DATASET.credits} credits)`,
            `api key: ${first.apiKey}`,
            'this key is shown once: keep it now (X-API-Key header)',
          );
        }
        // A long-running server: memory it grows to is kept (src/service/memory.ts). Set once listening
        // (its lines written): a young generation held small from the first allocation costs start-up collections.
        const { keepHeapSmall } = await import('../../service/memory.js');
        keepHeapSmall();
        const signal = await signalled;
        ctx.stderr.write(`kbsync serve: ${signal}, shutting down\n`);
      } finally {
        await service.close();
      }
    });

  const dataset = serve.command('dataset').description('manage datasets of a data folder');
  dataset
    .command('create')
    .description('create a dataset with a plan and credits, and print its API key (shown once)')
    .addHelpText('after', SUBCOMMAND_HELP)
    .requiredOption('--name <name>', 'dataset name')
    .addOption(new Option('--plan <plan>', 'plan').choices(PLANS).default('basic'))
    .option('--credits <n>', 'starting credits', parseCredits, 1_000)
    .option('--json', 'print {"datasetId", "apiKey"} as JSON')
    .action(async (options: { name: string; plan: Plan; credits: number; json?: boolean }) => {
      const created = await withAdmin(ctx, dataDirOf(serve), (admin) =>
        admin.createDataset({ name: options.name, plan: options.plan, credits: options.credits }),
      );
      if (options.json === true) {
        writeJson(ctx, created);
        return;
      }
      writeLines(
        ctx,
        `created dataset ${created.datasetId} "${options.name}" (plan ${options.plan}, ${options.credits} credits)`,
        `api key: ${created.apiKey}`,
      );
    });

  const credits = serve.command('credits').description('manage credit balances of a data folder');
  credits
    .command('add')
    .description('add N credits to a dataset and print the new balance')
    .addHelpText('after', SUBCOMMAND_HELP)
    .argument('<n>', 'credits to add', parseCredits)
    .requiredOption('--dataset <id>', 'dataset id')
    .option('--json', 'print {"datasetId", "credits"} as JSON')
    .action(async (n: number, options: { dataset: string; json?: boolean }) => {
      const balance = await withAdmin(ctx, dataDirOf(serve), (admin) => admin.addCredits(options.dataset, n));
      if (options.json === true) {
        writeJson(ctx, { datasetId: options.dataset, credits: balance });
        return;
      }
      writeLines(ctx, `dataset ${options.dataset}: ${balance} credits`);
    });
}
