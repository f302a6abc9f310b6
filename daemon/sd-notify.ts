/**
 * systemd's readiness protocol (sd_notify(3)) for `Type=notify`: `READY=1` once ledgerd
 * accepts requests, `STOPPING=1` as it begins to stop, `STATUS=` lines for `systemctl
 * status`. A no-op unless systemd set `$NOTIFY_SOCKET`.
 *
 * The socket is a unix datagram socket, which Node cannot open (its `dgram` is UDP only,
 * `net` streams only), and npm skips dependencies' install scripts, so a native binding
 * would not build. So the message goes through `systemd-notify` (on every systemd host).
 * Sent from a child, it is attributed to the unit only with `NotifyAccess=all` (the unit
 * sets it) and only while the sender lives when PID 1 reads it: systemd-notify without
 * `--no-block` waits for PID 1 to have processed it (a BARRIER=1 round trip), so the child
 * outlives the message (systemd-notify(1)).
 */
import { execFile } from 'node:child_process';
import { notifyTimeoutMs } from './constants.js';

export type Notify = (assignments: readonly string[]) => Promise<void>;

/**
 * The notifier for this process's environment: without `$NOTIFY_SOCKET`, one that does
 * nothing. A failure to notify is reported to `warn` (never thrown): the daemon serves
 * on, and systemd's start timeout says the rest.
 */
export function notifier(env: NodeJS.ProcessEnv, warn: (message: string) => void): Notify {
  if (env.NOTIFY_SOCKET === undefined || env.NOTIFY_SOCKET === '') return async () => {};
  return (assignments) =>
    new Promise<void>((resolve) => {
      execFile('systemd-notify', [...assignments], { timeout: notifyTimeoutMs, env }, (error, _stdout, stderr) => {
        if (error !== null) warn(`systemd-notify ${assignments.join(' ')} failed: ${error.message}${stderr === '' ? '' : `: ${stderr.trim()}`}`);
        resolve();
      });
    });
}
