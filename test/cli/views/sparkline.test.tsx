import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { Sparkline, sparkline } from '../../../cli/views/sparkline.js';

describe('Sparkline', () => {
  it('scales bars to the largest value', () => {
    expect(sparkline([0, 1, 2, 4, 8])).toBe('▁▁▂▄█');
    expect(sparkline([0, 0])).toBe('▁▁');
    expect(render(<Sparkline values={[1, 7]} />).lastFrame()).toBe('▂█');
  });
});
