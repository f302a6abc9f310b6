/**
 * A JSON object kept in one file of mode 0600: read at every access (another ledgerctl may have
 * written it since) and replaced whole on every write (a temp file, synced, then renamed), so a
 * crash leaves the old file or the new one. The files and places `conf` used, which this replaces:
 * `conf` (with ajv and semver) took a third of a short command's start.
 */
import { closeSync, fchmodSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './errors.js';

const fileMode = 0o600;

/** The user's configuration directory for ledgerctl, where `conf` (through env-paths) put it. */
export function configDirDefault(): string {
  const name = 'ledgerctl-nodejs';
  if (process.platform === 'darwin') return join(homedir(), 'Library', 'Preferences', name);
  if (process.platform === 'win32') return join(process.env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), name, 'Config');
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), name);
}

export class JsonFile<T extends object> {
  constructor(
    readonly path: string,
    private readonly defaults: Partial<T> = {},
  ) {}

  get<K extends keyof T & string>(key: K): T[K] {
    const data = this.read();
    return (Object.hasOwn(data, key) ? data[key] : this.defaults[key]) as T[K];
  }

  set<K extends keyof T & string>(key: K, value: T[K]): void {
    const data = this.read();
    data[key] = value;
    this.write(data);
  }

  delete(key: keyof T & string): void {
    const data = this.read();
    if (!Object.hasOwn(data, key)) return;
    delete data[key];
    this.write(data);
  }

  /** Without a prototype: a key such as `__proto__` (a profile may be so named) is an entry like any other. */
  private read(): T {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return Object.create(null) as T;
      throw error;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError(`${this.path} is not a JSON object: repair or remove it`);
    return Object.assign(Object.create(null), parsed) as T;
  }

  private write(data: T): void {
    // A new directory only its owner may list (the files in it are 0600 anyway).
    mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
    const temp = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      const fd = openSync(temp, 'w', fileMode);
      try {
        // Exactly 0600 whatever the umask: the files hold tokens and private keys.
        fchmodSync(fd, fileMode);
        writeSync(fd, JSON.stringify(data, undefined, '\t'));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, this.path);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
  }
}
