// Run before `npm test`: the integration suites drive real programs, and a missing one should be
// named up front rather than surface as dozens of puzzling failures.
import { accessSync, constants } from 'node:fs';
import { execFileSync } from 'node:child_process';

const onPath = (cmd) => {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};
const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

const missing = [
  ['tmux', onPath('tmux')],
  ['python3', executable('/usr/bin/python3')],
  ['openssh-server', executable('/usr/sbin/sshd') && onPath('ssh-keygen')],
  ['chromium', executable('/usr/bin/chromium')],
  ['faketime', onPath('faketime')],
  ['prometheus', onPath('promtool')],
  ['openssl', onPath('openssl')],
  ['curl', onPath('curl')],
]
  .filter(([, ok]) => !ok)
  .map(([pkg]) => pkg);

if (missing.length) {
  process.stderr.write(
    `npm test: the integration tests need ${missing.join(', ')}.\n` +
      `Install with: apt-get update && apt-get install -y --no-install-recommends ${missing.join(' ')}\n` +
      '(or run `bash .ci/run`, which installs what is missing and then runs the tests)\n',
  );
  process.exit(1);
}
