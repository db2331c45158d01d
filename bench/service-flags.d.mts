// The types of bench/service-flags.mjs, for the tests written in TypeScript.
export declare const SERVICE_NODE_FLAGS: string[];
