/**
 * What every command runs with: the streams, the global flags, the profile store and one client.
 * Flags beat the environment, which beats the profile (CONTRACT 1): `--url`, else `$LEDGER_URL`,
 * else the profile, else 127.0.0.1:8470; token: `--token`, else `$LEDGER_TOKEN`, else the
 * profile's. An explicit `--profile` is a flag: its address and token beat the environment's,
 * and neither is mixed with the environment's (a token never goes to another profile's service).
 */
import { randomBytes } from 'node:crypto';
import { LedgerClient } from './client.js';
import type { Io } from './io.js';
import { clientKeyRandomBytes, timeoutDefaultMs, timeoutMaxMs } from './limits.js';
import { UsageError } from './errors.js';
import { Output } from './output.js';
import { noColor } from './live.js';
import { integer } from './parse.js';
import { type Profile, ProfileStore, defaultOrigin, defaultRpId, defaultUrl, presentedToken } from './profiles.js';

export interface GlobalOptions {
  url?: string;
  token?: string;
  profile?: string;
  json?: boolean;
  field?: string;
  timeoutMs?: string;
  output?: string;
  /** False with `--no-color`. */
  color?: boolean;
}

export class Context {
  readonly out: Output;
  private store: ProfileStore | undefined;
  private opened: LedgerClient | undefined;
  private madeClientKey: string | undefined;
  /** When the invocation began: `--timeout-ms` counts from here. */
  private readonly startedAtMs = Date.now();

  constructor(
    readonly io: Io,
    readonly globals: GlobalOptions,
  ) {
    this.out = new Output(io, globals);
  }

  /** The profile store, opened on first use (flags and environment alone need none). */
  async profiles(): Promise<ProfileStore> {
    this.store ??= await ProfileStore.open(this.io.env.LEDGERCTL_CONFIG_DIR);
    return this.store;
  }

  /**
   * The profile in use: `--profile`, else `$LEDGER_PROFILE`, else the active one, else `default`.
   * A profile named by flag or environment must exist (a usage error names those that do).
   */
  async profileName(): Promise<string> {
    const store = await this.profiles();
    const named = this.globals.profile ?? this.io.env.LEDGER_PROFILE;
    if (named === undefined) return store.active ?? 'default';
    if (store.get(named) === undefined) {
      const saved = store.names();
      throw new UsageError(`no profile named ${named}; ${saved.length === 0 ? 'none is saved (ledgerctl profile add NAME --url URL)' : `saved: ${saved.join(', ')}`}`);
    }
    return named;
  }

  /** The profile's settings; an unsaved profile gets the defaults and the connection in use. */
  async profile(): Promise<Profile> {
    const saved = (await this.profiles()).get(await this.profileName());
    return saved ?? { url: await this.url(), rpId: defaultRpId, origin: defaultOrigin };
  }

  private async url(): Promise<string> {
    const fromProfile = async () => (await this.profiles()).get(await this.profileName())?.url ?? defaultUrl;
    if (this.globals.url !== undefined) return this.globals.url;
    if (this.globals.profile !== undefined) return fromProfile();
    return this.io.env.LEDGER_URL ?? (await fromProfile());
  }

  private async token(): Promise<string | undefined> {
    const fromProfile = async () => presentedToken((await this.profiles()).secretsOf(await this.profileName()), Date.now());
    if (this.globals.token !== undefined) return this.globals.token;
    if (this.globals.profile !== undefined) return fromProfile();
    return this.io.env.LEDGER_TOKEN ?? (await fromProfile());
  }

  /** The account a name saved in the profile in use stands for (none without a saved profile). */
  async savedAccount(name: string): Promise<string | undefined> {
    const store = await this.profiles();
    const saved = store.get(await this.profileName())?.accounts ?? {};
    return Object.hasOwn(saved, name) ? saved[name] : undefined;
  }

  /** Saves `name` for `account` in the profile in use, saving the profile (with this connection) if it is not yet. */
  async saveAccount(name: string, account: string): Promise<string> {
    const store = await this.profiles();
    const profileName = await this.profileName();
    const profile = await this.profile();
    store.put(profileName, { ...profile, accounts: { ...profile.accounts, [name]: account } });
    return profileName;
  }

  /**
   * Keeps the service's asset symbols in the profile in use, for shell completion: only a saved
   * profile whose own service is the one in use (a reading never saves a profile by itself).
   */
  async rememberAssets(symbols: readonly string[]): Promise<void> {
    const store = await this.profiles();
    const name = await this.profileName();
    const saved = store.get(name);
    if (saved === undefined || saved.url !== (await this.url())) return;
    store.put(name, { ...saved, assets: [...symbols].sort() });
  }

  /** `--timeout-ms`: the bound of the whole command (every request, retry and wait for a decision in it). */
  get timeoutMs(): number {
    return integer('--timeout-ms', this.globals.timeoutMs ?? String(timeoutDefaultMs), 1, timeoutMaxMs);
  }

  /** Checks the output flags, then resolves the connection once; every later call returns the same client. */
  async connect(): Promise<void> {
    await this.out.prepare();
    if (this.globals.color === false || (this.io.env.NO_COLOR ?? '') !== '') noColor();
    this.opened ??= new LedgerClient(await this.url(), await this.token(), this.timeoutMs, this.startedAtMs + this.timeoutMs);
  }

  /**
   * The client key of what this invocation submits: `--client-key`, else one made at random for
   * this invocation (CONTRACT 11), shown on stderr so that running the command again can reuse it.
   * Every send of the invocation (its own retries, an enrolment's repeat) uses the same key.
   */
  clientKey(given: string | undefined): string {
    if (given !== undefined) return given;
    if (this.madeClientKey === undefined) {
      this.madeClientKey = randomBytes(clientKeyRandomBytes).toString('hex');
      this.out.note(`client key ${this.madeClientKey}`);
    }
    return this.madeClientKey;
  }

  client(): LedgerClient {
    if (this.opened === undefined) throw new Error('Context.client() before connect()');
    return this.opened;
  }

  async close(): Promise<void> {
    await this.opened?.close();
  }
}
