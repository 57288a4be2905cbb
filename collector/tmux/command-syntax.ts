// Turning argv-shaped tmux commands into what each transport needs. Pure string work.
//
// A chain is a list of commands; on tmux's argv the commands are separated by a bare `;`
// argument, in a control-mode line by an unquoted ` ; `.

/** The argv token that separates the commands of one chain. */
export const CHAIN_SEPARATOR = ';';

/** Split an argv on bare `;` tokens. Empty commands (`;;`, leading/trailing `;`) are dropped. */
export function splitChain(argv: readonly string[]): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  for (const arg of argv) {
    if (arg === CHAIN_SEPARATOR) {
      if (cur.length > 0) out.push(cur);
      cur = [];
    } else {
      cur.push(arg);
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * tmux reads any argv argument that ends in an unescaped `;` as "this argument, then end of
 * command" (so a value `a;` would be stored as `a`). Rewriting the final `;` as `\;` keeps it
 * literal; tmux only ever looks at that one backslash, so `x\;` becomes `x\\;` and reads back as
 * `x\;`.
 */
export function escapeArgvArg(arg: string): string {
  return arg.endsWith(';') ? `${arg.slice(0, -1)}\\;` : arg;
}

/** One argv for a whole chain, for a single tmux process. */
export function chainArgv(cmds: readonly (readonly string[])[]): string[] {
  const out: string[] = [];
  cmds.forEach((cmd, i) => {
    if (i > 0) out.push(CHAIN_SEPARATOR);
    for (const arg of cmd) out.push(escapeArgvArg(arg));
  });
  return out;
}

/**
 * Quote one argument for tmux's command parser (what a control-mode client writes on stdin).
 *
 * Single quotes keep everything literal: `#`, `$`, `~`, `;`, `{`, `\` and spaces. Two things
 * cannot live inside them: a single quote, and control characters (a newline would end the
 * control-mode line). Those are spliced in as double-quoted octal escapes; tmux joins adjacent
 * quoted pieces into one word, as a shell does. Double quotes are used for nothing else because
 * tmux expands `$VAR` and a leading `~` inside them.
 */
export function quoteCommandArg(arg: string): string {
  let out = '';
  let literal = '';
  const flush = (): void => {
    if (literal !== '') out += `'${literal}'`;
    literal = '';
  };
  for (const ch of arg) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === "'" || code < 0x20 || code === 0x7f) {
      flush();
      out += `"\\${code.toString(8).padStart(3, '0')}"`;
    } else {
      literal += ch;
    }
  }
  flush();
  return out === '' ? "''" : out;
}

/** A whole chain as one control-mode input line (no trailing newline). */
export function controlLine(cmds: readonly (readonly string[])[]): string {
  return cmds.map((cmd) => cmd.map(quoteCommandArg).join(' ')).join(' ; ');
}
