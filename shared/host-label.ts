// The name a collector announces for its machine when none is given: the hub takes letters,
// digits, dot, dash and underscore (up to 253), so an odd machine name still gets a usable label
// rather than a refused hello. `tma collector` and a hub's own collector both name themselves so.

/** `name` with every other character a dash, cut to 253; never empty. */
export function hostLabel(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 253) || 'localhost';
}
