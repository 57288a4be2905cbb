export function installList(names?: string[]): { name: string; version: string }[];
export function installAgents(names?: string[]): { ms: number; fresh: number; text: string };
