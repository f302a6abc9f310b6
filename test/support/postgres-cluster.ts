/**
 * A private, throwaway PostgreSQL cluster for tests and benches: `initdb` in a fresh
 * temp dir, the server on a free loopback port (no other listener, its socket in that
 * dir), password authentication with a password drawn for this cluster, then stop and
 * remove. PostgreSQL's programs come from Debian's packages (`/usr/lib/postgresql/15/bin`,
 * or `PG_BIN_DIR`). `initdb` refuses to run as root, so as root every program runs as
 * the `postgres` user (`runuser`) on a dir that user owns.
 *
 * `startStandby` adds a streaming standby of such a cluster (for the failover test).
 *
 * Used by bench/versus-postgres and by tests that need a real PostgreSQL.
 */
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
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
  /** Stops the server at once, as a crash would (immediate shutdown: no checkpoint); the dir stays until `stop`. */
  crash(): Promise<void>;
  /** Starts it again after `crash`, on the same port (it recovers from its WAL). */
  restart(): Promise<void>;
  /** Freezes the server (SIGSTOP to the postmaster, then every process it forked): connections stay open, nothing answers. */
  pause(): void;
  /** Thaws what `pause` froze (SIGCONT, postmaster last). */
  resume(): void;
}

export interface PostgresStandby extends PostgresCluster {
  /** Ends recovery: the standby becomes a primary that takes writes (waits until it does). */
  promote(): Promise<void>;
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

/** Runs PostgreSQL's programs (as the `postgres` user when we are root: initdb refuses root). */
function programs(binDir: string) {
  if (!existsSync(join(binDir, 'initdb'))) {
    throw new Error(`PostgreSQL programs not found in ${binDir}: apt-get install postgresql (or set PG_BIN_DIR)`);
  }
  const asRoot = process.getuid?.() === 0;
  const prefix = asRoot ? ['runuser', '-u', 'postgres', '--'] : [];
  const argv = (program: string, args: string[]): [string, string[]] => {
    const [command, ...rest] = [...prefix, join(binDir, program), ...args];
    return [command!, rest];
  };
  const pg = (program: string, args: string[], env?: NodeJS.ProcessEnv) => run(...argv(program, args), { timeout: (pgCtlTimeoutS + 10) * 1000, env: { ...process.env, ...env } });
  const own = (...paths: string[]) => {
    if (!asRoot) return;
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
    for (const path of paths) chownSync(path, uid, gid);
  };
  return { argv, pg, own };
}

type Programs = ReturnType<typeof programs>;

export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const settings = { ...durableSettings, ...options.settings };
  const tools = programs(options.binDir ?? process.env.PG_BIN_DIR ?? defaultPostgresBinDir);
  const password = randomBytes(24).toString('hex');
  return runCluster(tools, settings, password, async (dir, dataDir) => {
    const passwordFile = join(dir, 'password');
    writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
    tools.own(passwordFile);
    await tools.pg('initdb', ['-D', dataDir, '-U', 'postgres', '--pwfile', passwordFile, '--auth-host=scram-sha-256', '--auth-local=scram-sha-256', '-E', 'UTF8', '--no-locale']);
    rmSync(passwordFile);
  });
}

/**
 * A streaming standby of `primary` (pg_basebackup -R), connected as `name` (its
 * application_name: list it in the primary's synchronous_standby_names to make it
 * synchronous). The primary's default pg_hba already lets loopback replicate.
 */
export async function startStandby(primary: PostgresCluster, name: string, options: PostgresClusterOptions = {}): Promise<PostgresStandby> {
  const settings = { ...durableSettings, ...options.settings };
  const tools = programs(options.binDir ?? process.env.PG_BIN_DIR ?? defaultPostgresBinDir);
  let dataDirOf = '';
  const cluster = await runCluster(tools, settings, primary.password, async (_dir, dataDir) => {
    dataDirOf = dataDir;
    const source = `host=${primary.host} port=${primary.port} user=${primary.user} application_name=${name}`;
    await tools.pg('pg_basebackup', ['-d', source, '-D', dataDir, '-R', '-X', 'stream', '-c', 'fast'], { PGPASSWORD: primary.password });
  });
  return {
    ...cluster,
    async promote() {
      await tools.pg('pg_ctl', ['-D', dataDirOf, '-w', '-t', String(pgCtlTimeoutS), 'promote']);
    },
  };
}

/** The postmaster's pid (first line of DATADIR/postmaster.pid) and those of the processes it forked (from /proc). */
function serverPids(dataDir: string): { postmaster: number; children: number[] } {
  const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/PID/stat is the parent's pid; the command (field 2) may hold spaces, so read past its closing paren.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) children.push(Number(entry));
    } catch {
      // The process ended meanwhile.
    }
  }
  return { postmaster, children };
}

/** Makes the cluster's dir, fills its data dir with `create`, then configures and starts the server on a free loopback port. */
async function runCluster(tools: Programs, settings: Record<string, string>, password: string, create: (dir: string, dataDir: string) => Promise<void>): Promise<PostgresCluster> {
  for (const name of Object.keys(settings)) if (!settingName.test(name)) throw new Error(`bad PostgreSQL setting name: ${name}`);
  const { argv, pg } = tools;
  const dir = mkdtempSync(join(tmpdir(), 'ledger-pg-'));
  const dataDir = join(dir, 'data');
  tools.own(dir);

  let started = false;
  let paused = false;
  const thaw = () => {
    if (!paused) return;
    paused = false;
    const { postmaster, children } = serverPids(dataDir);
    for (const pid of children) process.kill(pid, 'SIGCONT');
    process.kill(postmaster, 'SIGCONT');
  };
  const stopSync = () => {
    // A server left frozen by a failed test would not stop.
    thaw();
    // The test or bench process is exiting with the server still up: stop it at once.
    if (started) spawnSync(...argv('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']), { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopSync);

  try {
    await create(dir, dataDir);
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
        thaw();
        try {
          if (started) await pg('pg_ctl', ['-D', dataDir, '-m', 'fast', '-w', '-t', String(pgCtlTimeoutS), 'stop']);
          started = false;
        } finally {
          process.removeListener('exit', stopSync);
          stopSync();
        }
      },
      async crash() {
        if (!started) return;
        await pg('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
        started = false;
      },
      async restart() {
        if (started) return;
        await pg('pg_ctl', ['-D', dataDir, '-l', join(dir, 'server.log'), '-w', '-t', String(pgCtlTimeoutS), '-o', `-p ${port}`, 'start']);
        started = true;
      },
      pause() {
        // The postmaster first: stopped, it forks no new backend while its children are being stopped.
        const { postmaster, children } = serverPids(dataDir);
        paused = true;
        process.kill(postmaster, 'SIGSTOP');
        for (const pid of children) process.kill(pid, 'SIGSTOP');
      },
      resume: thaw,
    };
  } catch (error) {
    process.removeListener('exit', stopSync);
    stopSync();
    throw error;
  }
}
