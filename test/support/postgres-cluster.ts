/**
 * A private, throwaway PostgreSQL cluster for tests and benches: `initdb` in a fresh
 * temp dir, the server on a free loopback port (no other listener, its socket in that
 * dir), password authentication with a password drawn for this cluster, then stop and
 * remove. PostgreSQL's programs come from Debian's packages (`/usr/lib/postgresql/15/bin`,
 * or `PG_BIN_DIR`). `initdb` refuses to run as root, so as root every program runs as
 * the `postgres` user (`runuser`) on a dir that user owns.
 *
 * Used by bench/versus-postgres and by tests that need a real PostgreSQL.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const defaultPostgresBinDir = '/usr/lib/postgresql/15/bin';
/** How long `pg_ctl` may take to start or stop the server. */
const pgCtlTimeoutS = 60;
/** Attempts at a free port (another process may take the one we picked before the server binds it). */
const portAttemptsMax = 3;
const settingName = /^[a-z_][a-z0-9_.]*$/;

export interface PostgresClusterOptions {
  /** `postgresql.conf` settings on top of the defaults, e.g. `{ max_connections: '200' }`. */
  readonly settings?: Readonly<Record<string, string>>;
  readonly binDir?: string;
}

export interface PostgresCluster {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly user: 'postgres';
  readonly password: string;
  readonly database: 'postgres';
  /** The cluster's temp dir (data dir, socket, server log); removed by `stop`. */
  readonly dir: string;
  /** The settings written to `postgresql.conf`, as the server runs with them. */
  readonly settings: Readonly<Record<string, string>>;
  /** Stops the server (fast shutdown) and removes the dir. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Durable by default (the comparisons and tests want PostgreSQL as it runs in production):
 * fsync and synchronous_commit on, full-page writes on.
 */
export const durableSettings: Readonly<Record<string, string>> = {
  fsync: 'on',
  synchronous_commit: 'on',
  full_page_writes: 'on',
};

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** A postgresql.conf value, quoted (the file's own quoting: '' inside single quotes). */
function confValue(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const binDir = options.binDir ?? process.env.PG_BIN_DIR ?? defaultPostgresBinDir;
  if (!existsSync(join(binDir, 'initdb'))) {
    throw new Error(`PostgreSQL programs not found in ${binDir}: apt-get install postgresql (or set PG_BIN_DIR)`);
  }
  const settings = { ...durableSettings, ...options.settings };
  for (const name of Object.keys(settings)) if (!settingName.test(name)) throw new Error(`bad PostgreSQL setting name: ${name}`);

  const asRoot = process.getuid?.() === 0;
  const prefix = asRoot ? ['runuser', '-u', 'postgres', '--'] : [];
  const argv = (program: string, args: string[]): [string, string[]] => {
    const [command, ...rest] = [...prefix, join(binDir, program), ...args];
    return [command!, rest];
  };
  const pg = (program: string, args: string[]) => run(...argv(program, args), { timeout: (pgCtlTimeoutS + 10) * 1000 });

  const dir = mkdtempSync(join(tmpdir(), 'ledger-pg-'));
  const dataDir = join(dir, 'data');
  const passwordFile = join(dir, 'password');
  const password = randomBytes(24).toString('hex');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
    chownSync(passwordFile, uid, gid);
  }

  let started = false;
  const stopSync = () => {
    // The test or bench process is exiting with the server still up: stop it at once.
    if (started) spawnSync(...argv('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopSync);

  try {
    await pg('initdb', ['-D', dataDir, '-U', 'postgres', '--pwfile', passwordFile, '--auth-host=scram-sha-256', '--auth-local=scram-sha-256', '-E', 'UTF8', '--no-locale']);
    rmSync(passwordFile);
    appendFileSync(
      join(dataDir, 'postgresql.conf'),
      [
        '',
        '# ledger: a private cluster on loopback only',
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = ${confValue(dir)}`,
        ...Object.entries(settings).map(([name, value]) => `${name} = ${confValue(value)}`),
        '',
      ].join('\n'),
    );
    let port = 0;
    for (let attempt = 1; !started; attempt++) {
      port = await freeLoopbackPort();
      try {
        // The port is a number we chose: safe inside pg_ctl's shell command line.
        await pg('pg_ctl', ['-D', dataDir, '-l', join(dir, 'server.log'), '-w', '-t', String(pgCtlTimeoutS), '-o', `-p ${port}`, 'start']);
        started = true;
      } catch (error) {
        if (attempt >= portAttemptsMax) {
          const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
          throw new Error(`PostgreSQL did not start: ${(error as Error).message}\n${log}`);
        }
      }
    }
    let stopped = false;
    return {
      host: '127.0.0.1',
      port,
      user: 'postgres',
      password,
      database: 'postgres',
      dir,
      settings,
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await pg('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', String(pgCtlTimeoutS), 'stop']);
          started = false;
        } finally {
          process.removeListener('exit', stopSync);
          stopSync();
        }
      },
    };
  } catch (error) {
    process.removeListener('exit', stopSync);
    stopSync();
    throw error;
  }
}
