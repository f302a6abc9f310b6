/**
 * Ink writes only its last frame when it believes it runs in CI (`is-in-ci` reads CI
 * and CONTINUOUS_INTEGRATION once, when Ink is first imported). A live view on a
 * terminal is interactive whatever those say, so before importing Ink for one, the
 * CLI tells it so. Call only once stdout is known to be a terminal.
 */
export function renderLiveOnTerminal(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['CI', 'CONTINUOUS_INTEGRATION']) if (name in env) env[name] = 'false';
}

/**
 * `--no-color` or `$NO_COLOR` (no-color.org: set and not empty): Ink's styling (chalk) is off.
 * chalk reads the level once, when Ink is first imported, so this runs before any Ink view loads.
 */
export function noColor(env: NodeJS.ProcessEnv = process.env): void {
  env.FORCE_COLOR = '0';
}
