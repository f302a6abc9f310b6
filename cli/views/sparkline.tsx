/** A sparkline: one bar per value, scaled to the largest. */
import { Text } from 'ink';

const bars = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'] as const;

export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values.map((v) => (max === 0 ? bars[0] : bars[Math.min(bars.length - 1, Math.floor((v / max) * (bars.length - 1)))])).join('');
}

export function Sparkline({ values }: { values: readonly number[] }) {
  return <Text color="cyan">{sparkline(values)}</Text>;
}
