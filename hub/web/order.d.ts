// Types of the page's order keeping (order.js runs in the browser as written).

export class OrderKeeper {
  shown: string[];
  order(wanted: readonly string[], held: boolean): { keys: string[]; left: Set<string> };
}

export class Hold {
  constructor(afterMs?: number);
  until: number;
  reasons: Set<string>;
  touch(now: number): void;
  set(reason: string, on: boolean, now: number): void;
  held(now: number): boolean;
}
