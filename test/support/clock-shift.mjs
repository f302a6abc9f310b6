// Preloaded into a spawned ledgerd (NODE_OPTIONS=--import) by tests that need time to
// pass: each SIGUSR2 moves Date.now forward by LEDGERD_TEST_CLOCK_STEP_MS, then says so
// on stderr (the test waits for that line). Only tests load it; the daemon knows nothing of it.
const realNow = Date.now;
const stepMs = Number(process.env.LEDGERD_TEST_CLOCK_STEP_MS ?? '0');
let offsetMs = 0;
Date.now = () => realNow() + offsetMs;
process.on('SIGUSR2', () => {
  offsetMs += stepMs;
  process.stderr.write(`test clock: +${offsetMs} ms\n`);
});
