#!/usr/bin/env node
// Bytes allocated per request and the functions that allocate them, from a profile written by
// bench/alloc-probe.cjs: node bench/alloc-summary.mjs <profile.json> <requests> [top N]
import { readFileSync } from 'node:fs';

const [file, requestsArg, topArg] = process.argv.slice(2);
if (!file || !requestsArg) {
  console.error('usage: node bench/alloc-summary.mjs <profile.json> <requests during sampling> [top N]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8'));
const requests = Number(requestsArg);
const bySite = new Map();
let total = 0;
const site = ({ functionName, url, lineNumber }) =>
  `${functionName || '(anonymous)'} ${url.replace(/.*\/node_modules\//, '').replace(/.*\/dist\//, 'dist/')}:${lineNumber + 1}`;
const stack = [profile.head];
while (stack.length > 0) {
  const node = stack.pop();
  total += node.selfSize;
  if (node.selfSize > 0) bySite.set(site(node.callFrame), (bySite.get(site(node.callFrame)) ?? 0) + node.selfSize);
  stack.push(...node.children);
}
console.log(
  `${(total / 1024 / requests).toFixed(1)} KiB allocated per request (${(total / 1048576).toFixed(1)} MiB over ${requests} requests)`,
);
for (const [name, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 20))) {
  console.log(
    `${(bytes / 1024 / requests).toFixed(2).padStart(8)} KiB  ${((100 * bytes) / total).toFixed(1).padStart(5)}%  ${name}`,
  );
}
