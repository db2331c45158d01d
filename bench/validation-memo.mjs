// µs per validated listPets query through the global validation pipe
// (src/http/api-validation.pipe.ts), two ways: as the app runs it, where ListPetsQueryDto is a
// @PureQuery DTO whose accepted queries the pipe remembers (ApiValidationPipe.memoOf), and
// through a subclass without that mark, which the pipe validates afresh on every call
// (class-transformer and class-validator). The difference is what the memo saves.
//
//   node bench/validation-memo.mjs     builds src into .tmp/memo-dist first (about half a minute)
//   MEMO_SKIP_BUILD=1 node bench/...   reuses .tmp/memo-dist as it is
//
// Each side runs in rounds, alternating, after a warm-up; the median round is reported.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(ROOT, '.tmp/memo-dist');
const CALLS = 20_000;
const ROUNDS = 9;

if (process.env.MEMO_SKIP_BUILD !== '1' || !existsSync(path.join(DIST, 'http/api-validation.pipe.js'))) {
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', DIST],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
}
await import('reflect-metadata');
const { ApiValidationPipe } = await import(pathToFileURL(path.join(DIST, 'http/api-validation.pipe.js')).href);
const { ListPetsQueryDto } = await import(pathToFileURL(path.join(DIST, 'pets/dto/list-pets-query.dto.js')).href);

const pipe = new ApiValidationPipe();
const metadata = { type: 'query', metatype: ListPetsQueryDto, data: undefined };
// Express parses a fresh query object for every request.
const query = () => ({ limit: '20', status: 'available' });

// The same DTO without the @PureQuery mark: PureQuery() sets a symbol on the class, and a
// subclass would inherit it, so the subclass shadows it with false.
class FreshQueryDto extends ListPetsQueryDto {}
const mark = Object.getOwnPropertySymbols(ListPetsQueryDto).find((s) => s.description === 'animal-store.pure-query');
if (!mark) throw new Error('ListPetsQueryDto carries no @PureQuery mark');
Object.defineProperty(FreshQueryDto, mark, { value: false });
const fresh = { ...metadata, metatype: FreshQueryDto };

const sides = {
  // The pipe as the app runs it: every call after the first is served from its memo.
  remembered: (q) => pipe.transform(q, metadata),
  // The pipe validating every call.
  validated: (q) => pipe.transform(q, fresh),
};

async function round(fn) {
  const start = performance.now();
  for (let i = 0; i < CALLS; i++) await fn(query());
  return ((performance.now() - start) * 1000) / CALLS;
}

for (const fn of Object.values(sides)) for (let i = 0; i < 3; i++) await round(fn); // warm-up
const results = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, fn] of r % 2 ? Object.entries(sides).reverse() : Object.entries(sides))
    results[name].push(await round(fn));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const fn of Object.values(sides)) {
  const dto = await fn(query());
  if (!(dto instanceof ListPetsQueryDto) || dto.limit !== '20' || dto.status !== 'available')
    throw new Error('not the DTO');
}
console.log(`node ${process.version}, ${CALLS} calls x ${ROUNDS} rounds, median round:`);
for (const [name, xs] of Object.entries(results)) console.log(`  ${name.padEnd(10)} ${median(xs).toFixed(2)} µs/call`);
