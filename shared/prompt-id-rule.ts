// What a prompt id may be, for every place one is read: a row's `prompt_id` entering the hub, an
// act's `expect_prompt` (HTTP, the act frame, the CLI). One rule, so the page never sends back as
// `expect_prompt` a row's id that the act route would refuse. Collectors write 16 hex digits.

export const PROMPT_ID_MAX = 64;
export const PROMPT_ID_RE = /^[A-Za-z0-9._:-]{1,64}$/;
export const PROMPT_ID_RULE = 'a prompt id is 1 to 64 of letters, digits and . _ : -';

export function isPromptId(v: unknown): v is string {
  return typeof v === 'string' && PROMPT_ID_RE.test(v);
}
