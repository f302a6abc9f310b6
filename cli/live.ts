/**
 * Ink writes only its last frame when it believes it runs in CI (`is-in-ci` reads CI
 * and CONTINUOUS_INTEGRATION once, when Ink is first imported). A live view on a
 * terminal is interactive whatever those say, so before importing Ink for one, the
 * CLI tells it so. Call only once stdout is known to be a terminal.
 */
export function renderLiveOnTerminal(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION']) if (name in env) env[name] = 'false';
}
