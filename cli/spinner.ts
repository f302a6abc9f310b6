/**
 * The line `--wait` and `operations wait` show on a terminal (stderr) while a decision is pending:
 * a spinner, the operation and its state. Written as one line cut to the terminal's width, so it
 * never wraps, and erased whole when stopped: nothing of it is left on screen.
 */
import type { OutStream } from './io.js';
import { safe } from './safe.js';

// Kept here, not with the views: a wait must not load React (docs/performance.md, "ledgerctl start-up").
const spinnerFrames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'] as const;
const spinnerFrame = (tick: number): string => spinnerFrames[tick % spinnerFrames.length]!;

const spinnerIntervalMs = 80;
/** Back to the line's start, and the line erased. */
const eraseLine = '\r\x1b[2K';

export interface Spinner {
  state(state: string): void;
  stop(): void;
}

export function startSpinner(stream: OutStream, reference: string, state: string): Spinner {
  let tick = 0;
  let shown = state;
  const draw = () => {
    const text = `${spinnerFrame(tick)} waiting for ${safe(reference)} (${safe(shown)})`;
    // One column short of the width: a line that fills it would put some terminals on the next line.
    stream.write(`${eraseLine}${text.slice(0, Math.max(1, (stream.columns ?? 80) - 1))}`);
  };
  draw();
  const timer = setInterval(() => {
    tick++;
    draw();
  }, spinnerIntervalMs);
  return {
    state(next) {
      shown = next;
      draw();
    },
    stop() {
      clearInterval(timer);
      stream.write(eraseLine);
    },
  };
}
