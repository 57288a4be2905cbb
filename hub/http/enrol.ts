// One-line enrolment of a new host. `tma hub add-host NAME` leaves a code file here (named by the
// code's SHA-256, so the folder never holds a code itself) naming the host, its token file and
// an expiry; the line it prints fetches GET /v1/enrol/CODE over the hub's own TLS, pinned by the
// public key, and pipes the script into sh. The script downloads the collector this hub serves
// (checked against the digest written into the script), then redeems the code with
// POST /v1/enrol/CODE, which answers the host's token once: the first POST takes the file by an
// atomic rename, so a replay, a race or a second run is refused. An expired code is refused and
// removed. No client token is needed: the code is the capability, 128 random bits, short-lived.

import { createHash, X509Certificate } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import { z } from 'zod';
import { errorBody } from './gate.js';

export interface EnrolDeps {
  /** The code files (written by `tma hub add-host`). */
  dir: string;
  /** The collector builds this hub serves: tma.cjs and tma-VERSION-linux-ARCH, with SHA256SUMS. */
  files: string;
  /** The certificate the hub serves now (PEM); none: the hub speaks plain HTTP and enrols nobody. */
  cert: () => string | undefined;
  clock: () => number;
  logger: Logger;
}

const CODE = /^[0-9a-f]{32}$/;
export const enrolFile = z.strictObject({
  schema: z.literal(1),
  host: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/),
  token_file: z.string().min(1),
  expires_ms: z.number().int(),
  hub_url: z.string().regex(/^https:\/\/[A-Za-z0-9.[\]:-]+$/),
});
export type EnrolFile = z.infer<typeof enrolFile>;

export const codeFileName = (code: string) => `${createHash('sha256').update(code).digest('hex')}.json`;

/** curl's --pinnedpubkey form of a certificate's key: sha256// and the base64 SHA-256 of its SPKI. */
export function publicKeyPin(pem: string): string {
  const spki = new X509Certificate(pem).publicKey.export({ type: 'spki', format: 'der' });
  return `sha256//${createHash('sha256').update(spki).digest('base64')}`;
}

type Looked = { ok: true; entry: EnrolFile; path: string } | { ok: false; status: 404 | 410; why: string };

function look(d: EnrolDeps, code: string): Looked {
  if (!CODE.test(code)) return { ok: false, status: 404, why: 'not an enrolment code' };
  const path = join(d.dir, codeFileName(code));
  let entry: EnrolFile;
  try {
    entry = enrolFile.parse(JSON.parse(readFileSync(path, 'utf8')));
  } catch {
    return { ok: false, status: 410, why: 'no such enrolment code, or it was used already: run `tma hub add-host NAME` again' };
  }
  if (entry.expires_ms <= d.clock()) {
    rmSync(path, { force: true });
    return { ok: false, status: 410, why: 'this enrolment code expired: run `tma hub add-host NAME` again' };
  }
  return { ok: true, entry, path };
}

/** The builds on offer, from SHA256SUMS: name → digest. */
function served(d: EnrolDeps): Map<string, string> {
  const out = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync(join(d.files, 'SHA256SUMS'), 'utf8');
  } catch {
    return out;
  }
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{64}) {2}(tma\.cjs|tma-[0-9A-Za-z.+-]+-linux-(?:x64|arm64))$/.exec(line);
    if (m && existsSync(join(d.files, m[2]!))) out.set(m[2]!, m[1]!);
  }
  return out;
}

export function registerEnrolRoutes(app: Hono, d: EnrolDeps): void {
  app.get('/v1/enrol/:code', (c) => {
    const pem = d.cert();
    if (!pem) return c.text(`echo 'tma: this hub speaks plain HTTP: enrolment needs [tls] (tma hub tls)' >&2; exit 1\n`, 404);
    const found = look(d, c.req.param('code'));
    if (!found.ok) return c.text(`echo 'tma: ${found.why}' >&2; exit 1\n`, found.status);
    const builds = served(d);
    if (builds.size === 0)
      return c.text(
        `echo 'tma: this hub serves no collector build (${d.files} is empty); build one from the source: node tools/bundle-single.mjs --sea' >&2; exit 1\n`,
        503,
      );
    const script = enrolScript({
      code: c.req.param('code'),
      entry: found.entry,
      pin: publicKeyPin(pem),
      fingerprint: new X509Certificate(pem).fingerprint256,
      builds,
    });
    return c.body(script, 200, { 'content-type': 'text/x-shellscript; charset=utf-8', 'cache-control': 'no-store' });
  });

  app.get('/v1/enrol/:code/files/:name', (c) => {
    const found = look(d, c.req.param('code'));
    if (!found.ok) return c.json(errorBody(found.why), found.status);
    const name = c.req.param('name');
    if (!served(d).has(name)) return c.json(errorBody(`no build ${name} here`), 404);
    return c.body(readFileSync(join(d.files, name)), 200, { 'content-type': 'application/octet-stream' });
  });

  app.post('/v1/enrol/:code', (c) => {
    const found = look(d, c.req.param('code'));
    if (!found.ok) return c.json(errorBody(found.why), found.status);
    // The rename is the single use: of two requests racing, one finds the file gone.
    const taken = `${found.path}.taken-${process.pid}-${Math.random().toString(36).slice(2)}`;
    try {
      renameSync(found.path, taken);
    } catch {
      return c.json(errorBody('no such enrolment code, or it was used already: run `tma hub add-host NAME` again'), 410);
    }
    try {
      const token = readFileSync(found.entry.token_file, 'utf8').trim();
      d.logger.info({ host: found.entry.host }, 'host enrolled by code');
      return c.text(`${token}\n`, 200, { 'cache-control': 'no-store' });
    } finally {
      rmSync(taken, { force: true });
    }
  });
}

/** The script the one line pipes into sh: every value in it is checked above to be shell-safe. */
function enrolScript(o: { code: string; entry: EnrolFile; pin: string; fingerprint: string; builds: Map<string, string> }): string {
  const wss = o.entry.hub_url.replace(/^https:/, 'wss:');
  const sums = [...o.builds].map(([name, sum]) => `${name}) sum=${sum} ;;`).join('\n  ');
  const exe = [...o.builds.keys()].find((n) => n !== 'tma.cjs')?.replace(/-linux-(x64|arm64)$/, '') ?? 'tma-none';
  return `#!/bin/sh
# tma: enrol this machine as host ${o.entry.host} of the hub at ${o.entry.hub_url}
set -eu
hub='${o.entry.hub_url}'
code='${o.code}'
host='${o.entry.host}'
get() { curl -fsS -k --pinnedpubkey '${o.pin}' "$@"; }
share="\${XDG_DATA_HOME:-$HOME/.local/share}/tma"
cfg="\${XDG_CONFIG_HOME:-$HOME/.config}/tma"
case "$(uname -m)" in x86_64|amd64) arch=x64 ;; aarch64|arm64) arch=arm64 ;; *) arch=other ;; esac
name='${exe}'-linux-$arch
sum=''
case "$name" in
  ${sums}
esac
if [ -n "$sum" ]; then
  run="$share/tma"
elif command -v node >/dev/null 2>&1; then
  name=tma.cjs
  case "$name" in
  ${sums}
  esac
  run="$(command -v node) $share/tma.cjs"
fi
if [ -z "$sum" ]; then echo "tma: the hub serves no collector for linux-$arch and node is not installed here" >&2; exit 1; fi
mkdir -p "$share" "$cfg/tokens"
get -o "$share/$name.part" "$hub/v1/enrol/$code/files/$name"
echo "$sum  $share/$name.part" | sha256sum -c --status || { rm -f "$share/$name.part"; echo "tma: $name does not match its SHA-256; nothing installed" >&2; exit 1; }
chmod 755 "$share/$name.part"
mv "$share/$name.part" "$share/\${run##*/}"
umask 077
get -X POST -o "$cfg/tokens/hub-$host.part" "$hub/v1/enrol/$code"
mv "$cfg/tokens/hub-$host.part" "$cfg/tokens/hub-$host"
cmd="$run collector --hub ${wss} --hub-fingerprint ${o.fingerprint} --token-file $cfg/tokens/hub-$host --host-name $host"
if command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1; then
  unit="\${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
  mkdir -p "$unit"
  printf '[Unit]\\nDescription=tma collector (host %s)\\nAfter=network-online.target\\n\\n[Service]\\nExecStart=%s\\nRestart=always\\nRestartSec=5\\n\\n[Install]\\nWantedBy=default.target\\n' "$host" "$cmd" > "$unit/tma-collector.service"
  systemctl --user daemon-reload
  systemctl --user enable --now tma-collector.service
  echo "tma: host $host enrolled; its collector runs as the systemd user unit tma-collector (journalctl --user -u tma-collector)"
else
  echo "tma: host $host enrolled; no systemd user session here, so start the collector yourself:"
  echo "$cmd"
fi
`;
}
