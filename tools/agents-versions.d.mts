export type AgentName = 'claude' | 'codex' | 'opencode' | 'gemini' | 'pi';
export const AGENTS: Record<AgentName, { pkg: string; version: string; versions: string[]; bin: string }>;
export function agentsCache(): string;
export function agentPrefix(name: AgentName, version?: string): string;
export function agentBin(name: AgentName, version?: string): string;
