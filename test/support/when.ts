// Polling for a condition that a real process, over real links, makes true in its own time:
// `check` returns undefined until it holds; a timeout names what never happened.

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function when<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 20_000, stepMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(stepMs);
  }
}
