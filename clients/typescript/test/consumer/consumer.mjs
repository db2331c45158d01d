// A user's program: plain JavaScript (ESM) importing the client from the installed tarball, in a
// project of its own. package.e2e-spec.ts copies it there and runs it on Node 20 and Node 24
// against the running service; it prints one line of JSON (bigints as strings) for the test.
//
//     ANIMAL_STORE_URL=http://127.0.0.1:3000/v1 ANIMAL_STORE_KEY=ask2_… \
//     ANIMAL_STORE_READ_ONLY_KEY=ask2_… node consumer.mjs
import { AnimalStoreClient, AnimalStoreError, InsufficientScopeError } from '@animal-store/client';

const store = new AnimalStoreClient({
  baseUrl: process.env.ANIMAL_STORE_URL,
  apiKey: process.env.ANIMAL_STORE_KEY,
  onDeprecation: () => {}, // getPet is deprecated; stdout carries only the report
});

// 2^53 + 1: a JSON.parse client would read it back as 2^53.
const categoryId = 2n ** 53n + 1n;
const created = [];
for (let i = 0; i < 3; i++)
  created.push(await store.createPet({ name: `Consumer ${process.version} #${i}`, categoryId }));
const fetched = await store.getPet(created[0].id);

const pages = [];
for await (const page of store.pages({ limit: 2 })) pages.push(page.pets.map((pet) => String(pet.id)));

let missing;
try {
  await store.getPet(9223372036854775807n);
} catch (err) {
  if (!(err instanceof AnimalStoreError)) throw err;
  missing = { error: err.name, code: err.code, status: err.status };
}

// The key's quota, read twice without spending it.
const quotas = [await store.rateLimit(), await store.rateLimit()];
const quota = {
  plan: quotas[0].plan,
  minuteLimit: quotas[0].limits.minute.limit,
  remaining: quotas.map((q) => q.limits.minute.remaining),
  banned: quotas[0].banned,
};

// A key that may only read: its create is refused with the typed error.
const reader = new AnimalStoreClient({
  baseUrl: process.env.ANIMAL_STORE_URL,
  apiKey: process.env.ANIMAL_STORE_READ_ONLY_KEY,
});
const readable = (await reader.listPets({ limit: 1 })).pets.length;
let refused;
try {
  await reader.createPet({ name: 'Not allowed', categoryId });
} catch (err) {
  if (!(err instanceof InsufficientScopeError)) throw err;
  refused = {
    error: err.name,
    isAnimalStoreError: err instanceof AnimalStoreError,
    code: err.code,
    status: err.status,
    requiredScope: err.requiredScope,
    requestId: typeof err.requestId === 'string' && err.requestId.length > 0,
  };
}

const show = (pet) => ({
  id: String(pet.id),
  idType: typeof pet.id,
  name: pet.name,
  categoryId: String(pet.categoryId),
  categoryIdType: typeof pet.categoryId,
});
console.log(
  JSON.stringify({
    node: process.version,
    created: created.map(show),
    fetched: show(fetched),
    pages,
    missing,
    quota,
    readable,
    refused,
  }),
);
