export function installAgents(names?: string[]): { ms: number; fresh: number; text: string };
