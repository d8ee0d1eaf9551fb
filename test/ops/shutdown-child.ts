/**
 * A process whose stopping is ops/shutdown.ts's, for test/ops/shutdown.test.ts: its drain
 * waits until it is cut short (or FAIL_DRAIN makes it fail), and it says on stdout what ran.
 */
import { ClosingOrder, stopOnSignals } from "../../server/ops/shutdown.ts";

const closing = new ClosingOrder();
for (const name of ["store", "metrics", "runner"])
  closing.add({ close: async () => void console.log(`closed ${name}`) });
let cutShort: () => void = () => {};
stopOnSignals(
  "worker",
  {
    async drain(graceMs) {
      console.log(`draining ${graceMs}`);
      if (process.env.FAIL_DRAIN) throw new Error("the drain failed");
      await new Promise<void>((resolve) => (cutShort = resolve));
      await closing.close();
    },
    async close() {
      console.log("stopping now");
      cutShort();
      await closing.close();
    },
  },
  1234,
);
console.log("ready");
setInterval(() => {}, 1_000);
