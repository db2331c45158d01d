// The types of bench/log-lines.mjs, for the tests written in TypeScript.
export declare function logOffset(file: string): number;
export declare function linesSince(file: string, offset: number): number;
