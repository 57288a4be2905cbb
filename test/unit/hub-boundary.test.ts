// The hub is a cache of the collectors' truth: it must never pull in detection code, nor the CLI
// that wires collector and hub together. Every file under hub/, in every room and the web page's
// own, imports only hub/, shared/ and packages (node's and npm's).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, landsIn, rel, specifiers, tsFiles, under } from '../support/import-graph.js';

export function hubOffences(file: string, src: string): string[] {
  return specifiers(src).filter((s) => {
    const to = landsIn(file, s);
    return to !== null && !under(to, 'hub') && !under(to, 'shared');
  });
}

describe('hub import boundary', () => {
  it('the checker flags collector/, cli/ and other folders, at any depth, and nothing else', () => {
    const f = join(ROOT, 'hub/store/x.ts');
    expect(hubOffences(f, "import { fold } from '../../collector/core/fold.js';")).toEqual(['../../collector/core/fold.js']);
    expect(hubOffences(f, "const m = await import('../../cli/main.js');")).toEqual(['../../cli/main.js']);
    expect(hubOffences(f, "export { x } from '../../test/support/x.js';")).toEqual(['../../test/support/x.js']);
    // A sibling folder whose name merely starts like hub is not hub.
    expect(hubOffences(f, "import { x } from '../../hubble/x.js';")).toEqual(['../../hubble/x.js']);
    expect(hubOffences(join(ROOT, 'hub/web/page.js'), "import { a } from './format.js';")).toEqual([]);
    const fine = [
      "import { a } from './pieces.js';",
      "import type { B } from '../http/gate.js';",
      "import { c } from '../../shared/fleet.js';",
      "import { WebSocket } from 'ws';",
      "import { readFileSync } from 'node:fs';",
      "// import { fold } from '../../collector/core/fold.js';",
    ].join('\n');
    expect(hubOffences(f, fine)).toEqual([]);
  });

  it('no file under hub/ imports anything but hub/, shared/ and packages', () => {
    const files = tsFiles(join(ROOT, 'hub'), ['.ts', '.js']);
    // Files in the rooms and the page's scripts are all read, not only the top folder's.
    expect(files.some((f) => under(rel(f), 'hub/store'))).toBe(true);
    expect(files.some((f) => rel(f).endsWith('.js'))).toBe(true);
    const read = (f: string) => readFileSync(f, 'utf8');
    // The comment stripper must not end any file inside a string or comment that would hide
    // whatever follows it.
    const probe = "\nimport { fold } from '../../collector/core/fold.js';\n";
    const blind = files.filter((f) => hubOffences(f, read(f) + probe).length === 0);
    expect(blind.map(rel)).toEqual([]);
    const offences = files.flatMap((f) => hubOffences(f, read(f)).map((s) => `${rel(f)}: ${s}`));
    expect(offences).toEqual([]);
  });

  // The rest of the hub works against the FleetStore interface, so another store can stand in.
  it('only hub/server.ts names the in-memory store outside hub/store/', () => {
    const names = (file: string, src: string) => specifiers(src).some((s) => landsIn(file, s) === 'hub/store/memory-store.js');
    expect(names(join(ROOT, 'hub/http/x.ts'), "import { MemoryFleetStore } from '../store/memory-store.js';")).toBe(true);
    expect(names(join(ROOT, 'hub/http/x.ts'), "import type { FleetReads } from '../store/fleet-store.js';")).toBe(false);
    const files = tsFiles(join(ROOT, 'hub')).filter((f) => !under(rel(f), 'hub/store'));
    const naming = files.filter((f) => names(f, readFileSync(f, 'utf8'))).map(rel);
    expect(naming).toEqual(['hub/server.ts']);
  });
});
