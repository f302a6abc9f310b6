/**
 * The daemon's log, one line per entry on stderr (stdout carries only the readiness line):
 * pino's JSON (the default off a terminal: under systemd, into a pipe or a file), or for
 * people on a terminal a text line `TIME LEVEL message key=value …` (`--log-format text`).
 * When stderr is systemd's journal stream (`$JOURNAL_STREAM` names it), each line starts
 * with its syslog priority (`<3>` for errors, sd-daemon(3)), which journald takes off and
 * files the line under: `journalctl -p err` shows the errors. Lines from before the
 * logger exists (a startup failure) take the same form (`startupLine`).
 */
import { fstatSync } from 'node:fs';
import { oneLine } from '../src/one-line.js';

export const logFormats = ['json', 'text'] as const;
export type LogFormat = (typeof logFormats)[number];

/** pino's numeric levels, by name. */
const levelNames: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/** pino's level → syslog priority: fatal crit (2), error err (3), warn warning (4), info info (6), debug and trace debug (7). */
export function syslogPriority(level: number): number {
  if (level >= 60) return 2;
  if (level >= 50) return 3;
  if (level >= 40) return 4;
  if (level >= 30) return 6;
  return 7;
}

/** Text on a terminal, JSON anywhere else (a pipe, a file, the journal): what reads the log there is a program. */
export const defaultLogFormat = (stderr: { isTTY?: boolean }): LogFormat => (stderr.isTTY === true ? 'text' : 'json');

/**
 * Whether fd 2 is the journal's stream: `$JOURNAL_STREAM` is `DEVICE:INODE` of the socket
 * systemd connected it to, compared with fd 2 itself so a variable inherited by a child
 * whose stderr goes elsewhere (a test's pipe) does not count.
 */
export function stderrIsJournal(env: NodeJS.ProcessEnv, fd = 2): boolean {
  const m = /^([0-9]+):([0-9]+)$/.exec(env.JOURNAL_STREAM ?? '');
  if (m === null) return false;
  try {
    const stat = fstatSync(fd, { bigint: true });
    return stat.dev === BigInt(m[1]!) && stat.ino === BigInt(m[2]!);
  } catch {
    return false;
  }
}

/** A value as the text format writes it: bare when it is one plain word, else JSON (quoted, escaped), and never a control character. */
function textValue(value: unknown): string {
  if (typeof value === 'string' && /^[\x21-\x7e]+$/.test(value) && !/["=\\]/.test(value)) return value;
  return oneLine(typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value)));
}

/** One of pino's JSON lines as a text line: `TIME LEVEL message key=value …` (pid and hostname left out). */
export function textLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return oneLine(json);
  }
  const { level, time, msg, pid: _pid, hostname: _hostname, ...rest } = entry;
  const when = typeof time === 'number' ? new Date(time).toISOString() : '-';
  const name = (levelNames[level as number] ?? String(level)).toUpperCase();
  const fields = Object.entries(rest).map(([key, value]) => `${oneLine(key)}=${textValue(value)}`);
  return [when, name, oneLine(String(msg ?? '')), ...fields].join(' ');
}

export interface LogSink {
  /** One of pino's lines (JSON, newline-terminated). */
  write(line: string): void;
}

/** Where pino writes: the line as the format wants it, with its priority first under the journal. */
export function logSink(format: LogFormat, journal: boolean, out: { write(text: string): unknown }): LogSink {
  return {
    write(line: string) {
      const json = line.endsWith('\n') ? line.slice(0, -1) : line;
      const text = format === 'json' ? json : textLine(json);
      if (!journal) return void out.write(`${text}\n`);
      const level = /"level":([0-9]+)/.exec(json);
      out.write(`<${syslogPriority(level === null ? 30 : Number(level[1]))}>${text}\n`);
    },
  };
}

/** A line in pino's shape for what is logged before the app's logger exists (it writes through the same sink). */
export function earlyLine(level: 30 | 40 | 50 | 60, msg: string, fields: Record<string, unknown> = {}): string {
  return `${JSON.stringify({ level, time: Date.now(), pid: process.pid, ...fields, msg })}\n`;
}

/**
 * Set by `serve` once its sink exists: a failure to start is then a fatal line in the
 * log's format, not a plain line in the middle of the JSON stream.
 */
export const startupLog: { sink: LogSink | null } = { sink: null };
