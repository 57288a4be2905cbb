// The two config.toml settings the installers honour: `[install] wrapper_ref` (how configs name
// the wrapper) and `[focus] events` (also clear attention on pane-focus-in). The schema has
// already validated the file; this only reads those values.

import { readFileSync } from 'node:fs';
import { parse } from 'smol-toml';
import { configPath } from '../../collector/config/load-config.js';

export interface InstallSettings {
  wrapperRef: 'absolute' | 'bare' | undefined;
  focus: boolean;
}

export function installSettings(flag: string | undefined, env: NodeJS.ProcessEnv): InstallSettings {
  let doc: { install?: { wrapper_ref?: unknown }; focus?: { events?: unknown } };
  try {
    doc = parse(readFileSync(configPath(flag, env).path, 'utf8'));
  } catch {
    return { wrapperRef: undefined, focus: false };
  }
  const ref = doc.install?.wrapper_ref;
  if (ref !== undefined && ref !== 'absolute' && ref !== 'bare') {
    throw new Error(`config: [install] wrapper_ref is "absolute" or "bare", not ${JSON.stringify(ref)}`);
  }
  return { wrapperRef: ref, focus: doc.focus?.events === true };
}
