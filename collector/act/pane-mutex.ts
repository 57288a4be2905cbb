// One fire at a time per pane inside this process. The tmux-option lock keeps processes apart;
// acts that one collector runs concurrently for a hub share a process (and a pid in the lock
// value), so they also queue here and each one sees what the previous one left behind.

const queues = new WeakMap<object, Map<string, Promise<unknown>>>();

/** Run `fn` after every earlier call with the same (scope, key) has settled. */
export async function exclusive<T>(scope: object, key: string, fn: () => Promise<T>): Promise<T> {
  let m = queues.get(scope);
  if (m === undefined) queues.set(scope, (m = new Map<string, Promise<unknown>>()));
  const before = m.get(key) ?? Promise.resolve();
  const run = before.then(fn, fn);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  m.set(key, tail);
  try {
    return await run;
  } finally {
    // The last in line cleans up, so the map only holds panes with a fire pending.
    if (m.get(key) === tail) m.delete(key);
  }
}
