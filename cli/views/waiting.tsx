/** The spinner `operations wait` and `--wait` show on a terminal (on stderr) while the decision is pending. */
import { Text } from 'ink';
import { safe } from '../safe.js';
import { spinnerFrame, useTick } from './tick.js';

export interface WaitingProps {
  reference: string;
  state: string;
}

const spinnerIntervalMs = 80;

export function Waiting({ reference, state }: WaitingProps) {
  const tick = useTick(spinnerIntervalMs);
  return (
    <Text>
      <Text color="cyan">{spinnerFrame(tick)}</Text> waiting for {safe(reference)} <Text dimColor>({safe(state)})</Text>
    </Text>
  );
}
