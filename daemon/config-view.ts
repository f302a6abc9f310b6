/**
 * The configuration as `ledgerd config show` prints it (the effective settings, defaults
 * filled in, in the config file's own shape) with its one secret redacted: the password
 * of the PostgreSQL store's URL (in its user info or a `password` parameter). And what a
 * reload (SIGHUP) changed, by setting name.
 */
import type { Config } from './config.js';

// Plain letters: a URL would percent-encode brackets.
const redacted = 'REDACTED';

/** A postgres:// URL without its password; one that does not parse is redacted whole. */
export function redactUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return redacted;
  }
  if (url.password !== '') url.password = redacted;
  for (const key of [...url.searchParams.keys()]) if (key.toLowerCase() === 'password') url.searchParams.set(key, redacted);
  return url.href;
}

/** The effective configuration, secrets redacted; `listen` as `HOST:PORT`, as the file writes it. */
export function configView(config: Config): Record<string, unknown> {
  const host = config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host;
  return {
    ...config,
    listen: `${host}:${config.listen.port}`,
    store: config.store.kind === 'postgres' ? { ...config.store, url: redactUrl(config.store.url) } : config.store,
  };
}

/** The settings whose value differs between two configurations (names only: a value may be secret). */
export function changedSettings(before: Config, after: Config): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]) as Set<keyof Config>;
  return [...keys].filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key])).sort();
}
