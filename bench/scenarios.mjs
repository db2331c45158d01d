// The scenarios: what one request of each is (autocannon's shape, which bench/paced.mjs takes too),
// and on which dataset. The requests of some are completed at run time (bindScenario): the many
// keys' draw, and cursors taken from a real page's Link header.
import { randomUUID } from 'node:crypto';
import { URLSearchParams } from 'node:url';
import { keyPicker, keysInTurn } from './keys.mjs';
import { distModule } from './settings.mjs';
import { SEED_PETS } from './setup.mjs';

const SEED_MIDDLE = SEED_PETS / 2;
const AGED_MIDDLE = 1_000_000;

const list = (query) => ({ method: 'GET', path: `/v1/pets?${query}` });
const CREATE = {
  method: 'POST',
  path: '/v1/pets',
  headers: { 'content-type': 'application/json' },
  body: '{"name":"Bench pet","categoryId":9007199254740993,"status":"pending"}',
};

/**
 * The filtered lists on both datasets, limit=20: `cursorAfter` is about where the page starts
 * (its cursor comes from the Link header of the unfiltered page after that id).
 */
const statusLists = (prefix, middle, dataset) =>
  [
    ['Available', 'available', null],
    ['AvailableCursor', 'available', middle],
    ['Sold', 'sold', null],
    ['SoldCursor', 'sold', middle],
    ['Pending', 'pending', null],
  ].map(([suffix, status, after]) => ({
    name: `${prefix}${suffix}`,
    label: `${dataset} status=${status} limit=20${after ? ` after id ~${after.toLocaleString('en-US')}` : ''}`,
    dataset: dataset === 'aged' ? 'aged' : 'normal',
    status,
    cursorAfter: after,
    matching: `listStatus${suffix}`,
    request: list(`limit=20&status=${status}`),
  }));

export const NORMAL_SCENARIOS = [
  { name: 'listPets', label: 'listPets limit=20', request: list('limit=20') },
  { name: 'listPetsStatus', label: 'listPets status=sold limit=100', request: list('limit=100&status=sold') },
  {
    name: 'getPet',
    label: 'getPet (random id)',
    request: {
      method: 'GET',
      path: '/v1/pets/1',
      setupRequest: (req) => ({ ...req, path: `/v1/pets/${1 + Math.floor(Math.random() * SEED_PETS)}` }),
    },
  },
  { name: 'createPet', label: 'createPet', request: CREATE },
  {
    name: 'listPetsManyKeys',
    label: 'listPets limit=20, 2,000 keys',
    note: 'keys on the free, pro and business plans, drawn by per-minute limit, each from its own X-Forwarded-For address; raw, floor and peer ignore both headers',
    manyKeys: true,
    // A key's leases end with its minute, so every key in use goes to Redis at least once a
    // minute: a measured run of a whole minute at the fixed rate holds that renewal once, where
    // a run of a few seconds holds it or not.
    fixedSeconds: 60,
    request: list('limit=20'),
  },
  {
    name: 'createPetIdempotent',
    label: 'createPet, Idempotency-Key',
    note: 'a fresh Idempotency-Key (UUID) per request; raw, floor and peer have no idempotency and run their plain create',
    request: {
      ...CREATE,
      setupRequest: (req) => ({ ...req, headers: { ...req.headers, 'idempotency-key': randomUUID() } }),
    },
  },
  ...statusLists('listStatus', SEED_MIDDLE, '10k'),
];

export const AGED_SCENARIOS = [
  {
    name: 'agedList',
    label: 'aged listPets limit=20',
    dataset: 'aged',
    request: list('limit=20'),
  },
  ...statusLists('aged', AGED_MIDDLE, 'aged'),
];

const only = process.env.BENCH_ONLY?.split(',').map((s) => s.trim());
for (const name of only ?? [])
  if (![...NORMAL_SCENARIOS, ...AGED_SCENARIOS].some((s) => s.name === name))
    throw new Error(`BENCH_ONLY: unknown scenario "${name}"`);
const chosen = (s) => !only || only.includes(s.name);

export const SCENARIOS = NORMAL_SCENARIOS.filter(chosen);
export const SELECTED_AGED = AGED_SCENARIOS.filter(chosen);

/**
 * The scenarios of the cost ledger: listPets (the hot path) and the two paths production shapes,
 * listPetsManyKeys and createPetIdempotent, those of them that run, or else the first scenario
 * run; BENCH_PROFILE=<scenario>[,<scenario>…] names others and BENCH_PROFILE=0 skips the
 * profiled runs. Scenarios of the normal dataset only.
 */
const DEFAULT_PROFILES = ['listPets', 'listPetsManyKeys', 'createPetIdempotent'].filter((name) =>
  SCENARIOS.some((s) => s.name === name),
);
export const PROFILES =
  process.env.BENCH_PROFILE === '0'
    ? []
    : !process.env.BENCH_PROFILE || process.env.BENCH_PROFILE === '1'
      ? DEFAULT_PROFILES.length > 0
        ? DEFAULT_PROFILES
        : SCENARIOS.slice(0, 1).map((s) => s.name)
      : process.env.BENCH_PROFILE.split(',').map((s) => s.trim());
for (const name of PROFILES)
  if (!NORMAL_SCENARIOS.some((s) => s.name === name))
    throw new Error(`BENCH_PROFILE: unknown scenario "${name}" (${NORMAL_SCENARIOS.map((s) => s.name).join(', ')})`);

/**
 * A scenario with its request complete: the many keys' draw, and a cursor from `cursorFor`
 * (afterId) → cursor text.
 */
export async function bindScenario(scenario, { keys, cursorFor }) {
  let request = scenario.request;
  let introduction = null;
  if (scenario.manyKeys) {
    if (!keys) throw new Error(`${scenario.name} needs the many keys`);
    request = { ...request, setupRequest: keyPicker(keys) };
    introduction = { request: { ...scenario.request, setupRequest: keysInTurn(keys) }, keys: keys.length };
  }
  if (scenario.cursorAfter) {
    const cursor = await cursorFor(scenario.cursorAfter);
    request = { ...request, path: `${request.path}&cursor=${cursor}` };
  }
  return {
    ...scenario,
    request,
    // Every key sent once, in turn (compare.mjs, when no capacity phase has sent them).
    introduction,
    afterId: scenario.cursorAfter ? await decodedAfter(request.path) : null,
  };
}

/** The id a bound request's cursor points after, for the plans' parameters. */
async function decodedAfter(requestPath) {
  const { decodeCursor } = await distModule('pets/cursor.js');
  const id = decodeCursor(new URLSearchParams(requestPath.split('?')[1]).get('cursor'));
  return id === null ? null : Number(id);
}
