/**
 * docs/daemon.md's configuration table and the settings the daemon takes, for the tests
 * that hold the docs and the man page to the config (docs-defaults, cli/docs).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../daemon/config.js';

export interface ConfigRow {
  readonly setting: string;
  readonly defaultText: string;
  readonly boundsText: string;
}

/** The rows of docs/daemon.md's "Configuration" table, cells as written (backticks kept). */
export function configTable(repoRoot: string): ConfigRow[] {
  const doc = readFileSync(join(repoRoot, 'docs/daemon.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### Configuration'));
  return section
    .split('\n')
    .filter((line) => /^\| `[A-Za-z]+` \|/.test(line))
    .map((line) => {
      const cells = line.split('|').map((c) => c.trim());
      return { setting: cells[1]!.replaceAll('`', ''), defaultText: cells[2]!, boundsText: cells[3]! };
    });
}

export const withSettings = (settings: Record<string, unknown>) => () => loadConfig({ flags: {}, env: {}, readFile: () => JSON.stringify(settings) });

/** The defaults, and the names the config file accepts (the rest of Config is derived from settings). */
export function configSettings(): { config: Record<string, unknown>; settings: string[] } {
  const config = loadConfig({ flags: {}, env: {}, readFile: () => null }) as unknown as Record<string, unknown>;
  const accepted = (name: string) => {
    try {
      withSettings({ [name]: config[name] })();
      return true;
    } catch (error) {
      // Refused for its value (a listen address is text in the file): still a setting.
      return !(error instanceof ConfigError && error.message.includes('unknown setting'));
    }
  };
  return { config, settings: Object.keys(config).filter(accepted) };
}
