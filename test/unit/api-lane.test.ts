// The API lane's one attempt: what it says when nothing listens at the endpoint a pane announced.

import { describe, expect, it } from 'vitest';
import { replyPermission } from '../../collector/act/api-lane.js';
import { freePort } from '../support/ports.js';

describe('replyPermission', () => {
  it('names the endpoint nobody serves and how to get a current plugin, once, without retrying', async () => {
    const port = await freePort();
    const end = await replyPermission(`http://127.0.0.1:${port}`, 'per_1', 'once', 2000);
    expect(end.kind).toBe('error');
    expect(end.kind === 'error' && end.message).toBe(
      `API request failed: fetch failed; nothing listens at 127.0.0.1:${port} (tma install-hooks opencode, then restart OpenCode)`,
    );
  });
});
