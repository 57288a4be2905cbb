// The benches run their generators, readers and hubs as child processes of themselves: each child
// takes its start message from the parent, and ends with it, so a bench never leaves one behind.

/** Print what failed and end the bench (or the child) with a failure. */
export function fail(e: unknown): never {
  console.error(e);
  process.exit(1);
}

/** Run `role` with the parent's first message; exit when the parent goes away. */
export function asChild<T>(role: (m: T) => Promise<unknown>): void {
  process.once('message', (m: T) => void role(m).catch(fail));
  process.on('disconnect', () => process.exit(0));
}
