import * as z from 'zod/mini';

/**
 * The unsubscribe links' signing keys (issue 40): one Secrets Manager secret, read at run time
 * (never from an environment), whose value is `{"keys":[{id, secret, created_at}]}`. Every listed
 * key verifies; the newest key that every reader has had time to see signs. A rotation
 * (rotate-unsubscribe-keys, monthly) adds a key and drops those whose successor has signed for more
 * than LINK_LIFETIME_DAYS + KEY_MARGIN_DAYS, so a link keeps working at least LINK_LIFETIME_DAYS
 * after its email was sent.
 */

/** How long a link keeps working after the last email signed with its key (the issue: at least 60 days). */
export const LINK_LIFETIME_DAYS = 60;
/** Kept beyond that: a rotation run late or retried never cuts a link short. */
export const KEY_MARGIN_DAYS = 7;
/**
 * A new key verifies at once but signs only once it is this old: the secrets extension and this
 * module each keep a copy for up to 5 minutes, so a function signing with a key another function
 * has not yet read would make links that answer "not found" for those minutes.
 */
export const KEY_SIGNS_AFTER_MS = 60 * 60 * 1000;
/** How long a function keeps the keys it read (the extension keeps its own copy 300 s). */
export const KEYS_CACHE_MS = 5 * 60 * 1000;

const DAY_MS = 86_400_000;

export const signingKeySchema = z.object({
  /** Short, URL-safe: it is written in every token. */
  id: z.string().check(z.regex(/^[A-Za-z0-9_-]{1,32}$/)),
  /** The HMAC key (its UTF-8 bytes): at least 43 characters (32 random bytes in base64). */
  secret: z.string().check(z.minLength(43)),
  created_at: z.iso.datetime(),
});
export type SigningKey = z.infer<typeof signingKeySchema>;

export interface KeySet {
  readonly keys: readonly SigningKey[];
}

/**
 * The secret's value: `keys`, and on a secret no rotation has run on yet, the `seed` Secrets Manager
 * generated when the stack made it (the key `seed`, as old as can be: the first rotation's key
 * signs an hour after it is made, and the seed verifies until it is retired like any other).
 */
const secretSchema = z.object({
  keys: z.array(signingKeySchema),
  seed: z.optional(z.string().check(z.minLength(43))),
});

/** The secret's value, checked (a bad value throws: no link is signed with a key that is not there). */
export function parseKeySet(value: string): KeySet {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    json = undefined;
  }
  const parsed = secretSchema.safeParse(json);
  const keys = parsed.success
    ? [
        ...parsed.data.keys,
        ...(parsed.data.seed && !parsed.data.keys.some((key) => key.id === SEED_KEY_ID)
          ? [{ id: SEED_KEY_ID, secret: parsed.data.seed, created_at: new Date(0).toISOString() }]
          : []),
      ]
    : [];
  if (!keys.length)
    throw new Error('The unsubscribe keys\' secret is not {"keys":[{id, secret, created_at}, …]} with a key');
  return { keys };
}

/** The id of the key the stack's generated seed stands for. */
export const SEED_KEY_ID = 'seed';

const newestFirst = (keys: readonly SigningKey[]) =>
  [...keys].sort((a, b) => Date.parse(b.created_at) - Date.parse(a.created_at));

/** The key that signs now: the newest that is at least KEY_SIGNS_AFTER_MS old, else the oldest there is. */
export function signingKey(set: KeySet, now: Date): SigningKey {
  const sorted = newestFirst(set.keys);
  const ready = sorted.find((key) => Date.parse(key.created_at) <= now.getTime() - KEY_SIGNS_AFTER_MS);
  return ready ?? (sorted[sorted.length - 1] as SigningKey);
}

/** A new key's id: its creation time in seconds, base 36 (short, sortable, unique per rotation). */
export const keyIdAt = (at: Date): string => `k${Math.floor(at.getTime() / 1000).toString(36)}`;

/**
 * A rotation: the set with a new key (32 random bytes, from `random`), less the keys whose
 * successor was made more than LINK_LIFETIME_DAYS + KEY_MARGIN_DAYS ago (the last link a key
 * signed was signed before its successor started signing). The newest key is never dropped.
 */
export function rotateKeySet(
  set: KeySet | undefined,
  now: Date,
  random: (bytes: number) => Uint8Array,
): KeySet {
  const added: SigningKey = {
    id: keyIdAt(now),
    secret: Buffer.from(random(32)).toString('base64'),
    created_at: now.toISOString(),
  };
  const sorted = newestFirst([added, ...(set?.keys ?? []).filter((key) => key.id !== added.id)]);
  const cutoff = now.getTime() - (LINK_LIFETIME_DAYS + KEY_MARGIN_DAYS) * DAY_MS;
  const kept = sorted.filter((_, i) => {
    const successor = sorted[i - 1];
    // A key's links were signed until its successor signed (KEY_SIGNS_AFTER_MS after it was made).
    return !successor || Date.parse(successor.created_at) + KEY_SIGNS_AFTER_MS > cutoff;
  });
  return { keys: kept };
}

/** Reads the keys (the secret's value) and keeps them KEYS_CACHE_MS; `fresh` reads again (an unknown key id). */
export class KeyRing {
  private cached?: { set: Promise<KeySet>; at: number };

  constructor(
    private readonly read: () => Promise<string>,
    private readonly now: () => number = Date.now,
  ) {}

  async keys(fresh = false): Promise<KeySet> {
    const at = this.now();
    const age = this.cached ? at - this.cached.at : Number.POSITIVE_INFINITY;
    // A fresh read at most once a minute: forged tokens naming unknown keys cannot make every request read.
    if (age >= KEYS_CACHE_MS || (fresh && age >= 60_000)) {
      const set = this.read().then(parseKeySet);
      this.cached = { set, at };
      set.catch(() => {
        if (this.cached?.set === set) this.cached = undefined;
      });
    }
    return (this.cached as { set: Promise<KeySet> }).set;
  }
}
