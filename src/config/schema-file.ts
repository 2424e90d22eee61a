import { relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** kbsync.schema.json, at the package's root: two folders up from src/config, dist/config and dist/bundle. */
export const CONFIG_SCHEMA_FILE = fileURLToPath(new URL('../../kbsync.schema.json', import.meta.url));

/**
 * The first line of a kbsync.yaml that names its JSON Schema for editors (yaml-language-server, VS
 * Code's YAML extension): relative to the config's folder when the schema is inside it (kbsync
 * installed in the project), else as a file URL.
 */
export function schemaModeline(configFolder: string): string {
  const rel = relative(configFolder, CONFIG_SCHEMA_FILE);
  const inside = rel !== '' && !rel.startsWith('..') && !rel.startsWith(sep);
  const target = inside ? `./${rel.split(sep).join('/')}` : pathToFileURL(CONFIG_SCHEMA_FILE).href;
  return `# yaml-language-server: $schema=${target}\n`;
}
