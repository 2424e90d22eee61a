import type { Agent, KnowledgeClient } from '../../client/index.js';
import { KbsyncError } from '../../shared/errors.js';

/** The agent a command line named: its id, its name when known, and how to call it in messages. */
export type ResolvedAgent = { id: string; name: string | null; label: string };

/** How an agent reads in messages: `docs-helper (id 3)`, or `3` when it has no name. */
export function agentLabel(a: { id: string; name: string | null }): string {
  return a.name === null ? a.id : `${a.name} (id ${a.id})`;
}

/**
 * Finds the agent `ref` names among those the dataset's key sees (one free listing): an agent whose id
 * is `ref` first, else the only agent named `ref` (exactly, case and all). Several agents of that name:
 * a usage error listing them, to be named by id. A number no listed agent has is passed on as an id (a
 * service may list fewer agents than it lets a key use; it answers 404 `agent not found` for one it does
 * not know). A name nobody has: not_found, with the agents there are.
 */
export async function resolveAgent(client: KnowledgeClient, ref: string): Promise<ResolvedAgent> {
  const wanted = ref.trim();
  if (wanted === '') throw new KbsyncError('usage', 'the agent: give its id or its name (kbsync agents list)');
  if (!/^\d+$/.test(wanted)) return pickAgent(await client.listAgents(), wanted);
  // An id works without the listing: if the service cannot list agents, the call itself says whether it knows the id.
  const agents = await client.listAgents().catch(() => null);
  return agents === null ? { id: wanted, name: null, label: wanted } : pickAgent(agents, wanted);
}

/** resolveAgent's choice among `agents`. */
function pickAgent(agents: readonly Agent[], wanted: string): ResolvedAgent {
  const byId = agents.find((a) => a.id === wanted);
  if (byId !== undefined) return resolved(byId);
  const named = agents.filter((a) => a.name === wanted);
  if (named.length === 1) return resolved(named[0] as Agent);
  if (named.length > 1) {
    throw new KbsyncError(
      'usage',
      `${named.length} agents are named "${wanted}": ${named.map((a) => `id ${a.id}${a.createdAt === null ? '' : ` (created ${a.createdAt})`}`).join(', ')}; give the id of the one you mean`,
    );
  }
  if (/^\d+$/.test(wanted)) return { id: wanted, name: null, label: wanted };
  const alike = agents.filter((a) => a.name?.toLowerCase() === wanted.toLowerCase());
  const hint =
    alike.length > 0
      ? `; did you mean ${alike.map((a) => `"${a.name ?? ''}"`).join(' or ')}? (names are case-sensitive)`
      : agents.length === 0
        ? '; the dataset has no agent yet: create one with `kbsync agents create NAME`'
        : `; its agents: ${agents.map(agentLabel).join(', ')}`;
  throw new KbsyncError('not_found', `no agent named "${wanted}"${hint}`);
}

function resolved(a: Agent): ResolvedAgent {
  return { id: a.id, name: a.name, label: agentLabel(a) };
}
