// on-exit-leak-free (pino's own exit hook) ships no types: the part this service uses.
declare module 'on-exit-leak-free' {
  /** Calls fn(obj, 'exit') when the process exits, while obj is alive; holds obj weakly. */
  export function register<T extends object>(obj: T, fn: (obj: T, event: 'exit') => void): void;
}
