// waitFor lives in local-servers.mjs, which the bench imports too.
export { WAIT_FOR_TIMEOUT_MS, waitFor } from './local-servers.mjs';
export type { WaitForOptions } from './local-servers.mjs';
