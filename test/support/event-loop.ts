/** Runs `work` and counts the turns of the event loop while it runs (0 or 1 when `work` blocks it to the end). */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let done = false;
  let turns = 0;
  const tick = (): void => {
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  const result = await work();
  done = true;
  return { result, turns };
}
