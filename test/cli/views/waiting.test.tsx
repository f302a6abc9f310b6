import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { Waiting } from '../../../cli/views/waiting.js';
import { spinnerFrames } from '../../../cli/views/tick.js';

describe('Waiting', () => {
  it('shows a spinner, the reference and its state, and turns', async () => {
    const { lastFrame, frames, rerender, unmount } = render(<Waiting reference="op_1" state="Received" />);
    expect(lastFrame()).toBe(`${spinnerFrames[0]} waiting for op_1 (Received)`);
    await new Promise((r) => setTimeout(r, 250));
    expect(new Set(frames).size).toBeGreaterThan(1);
    rerender(<Waiting reference="op_1" state="Reserved" />);
    expect(lastFrame()).toContain('(Reserved)');
    unmount();
  });
});
