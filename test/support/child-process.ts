// watchChild lives in local-servers.mjs, which the bench imports too.
export { watchChild } from './local-servers.mjs';
export type { WatchedChild } from './local-servers.mjs';
