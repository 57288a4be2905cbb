import type { Parsed } from '../args.js';

export async function main(_p: Parsed): Promise<number> {
  process.stderr.write('tma: not built yet\n');
  return 1;
}
