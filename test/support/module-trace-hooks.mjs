// Resolve hook for module-trace.mjs; runs on the loader's own thread.

import { appendFileSync } from 'node:fs';

let out = null;

export function initialize(data) {
  out = data?.out ?? null;
}

export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (out) appendFileSync(out, `${r.url}\n`);
  return r;
}
