// A token file others can read is a credential others can use. Nothing is refused for it (the
// owner may have reasons, such as a group-shared deploy), but it is said once, with the fix.

import { statSync } from 'node:fs';

/** A one-line warning when `path` grants read to its group or to others; null when it does not (or cannot be read). */
export function tokenFileWarning(path: string): string | null {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch {
    return null;
  }
  if ((mode & 0o044) === 0) return null;
  const shown = (mode & 0o777).toString(8).padStart(4, '0');
  return `token file ${path} is readable by other users (mode ${shown}); fix: chmod 600 ${path}`;
}
