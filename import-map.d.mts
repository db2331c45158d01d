/** Each kernel folder of src/ with the kernel folders it may import. */
export const KERNEL: Record<string, string[]>;
/** Each feature folder of src/ with the features it may import (and the whole kernel). */
export const FEATURES: Record<string, string[]>;
