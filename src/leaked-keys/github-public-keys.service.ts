import { Inject, Injectable, Logger } from '@nestjs/common';
import { verify } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { leakedKeysConfig, type LeakedKeysConfig } from '../config/leaked-keys.config.js';
import { MAX_KEYS_FILE_BYTES, parseGithubPublicKeys, type GithubPublicKey } from '../config/github-public-keys.js';
import { Clock } from '../time/clock.js';

/** The keys file is looked at again (its size and modification time) at most this often. */
export const KEYS_FILE_RECHECK_MS = 10_000;
/** Longest Github-Public-Key-Signature read: a base64 DER P-256 signature is at most 96 characters. */
const MAX_SIGNATURE_LENGTH = 200;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Why a report's signature was refused (logged, never answered: the answer is one 401). */
export type SignatureRefusal = 'missing' | 'unknown_key' | 'not_current' | 'malformed' | 'wrong';

/**
 * GitHub's secret scanning public keys, from the file SECRET_SCANNING_GITHUB_KEYS names, and the
 * check of a report's signature against them: ECDSA P-256 with SHA-256 over the raw body, DER,
 * base64, by the key the report names, which must be the one GitHub marks current. The file is
 * read again when its size or modification time changes (looked at every KEYS_FILE_RECHECK_MS at
 * most), so an operator refreshes the keys by replacing the file; a replacement that does not
 * parse is logged and the keys read before are kept.
 */
@Injectable()
export class GithubPublicKeys {
  private readonly logger = new Logger('SecretScanning');
  private keys = new Map<string, GithubPublicKey>();
  private version = '';
  private checkedAtMs = -Infinity;
  private reloading?: Promise<void>;

  constructor(
    @Inject(leakedKeysConfig.token) private readonly config: LeakedKeysConfig,
    private readonly clock: Clock,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.reload(true);
  }

  /** Undefined when `signature` (base64 DER) is `keyId`'s current key's over `body`, else why not. */
  async check(
    body: Buffer,
    keyId: string | undefined,
    signature: string | undefined,
  ): Promise<SignatureRefusal | undefined> {
    if (keyId === undefined || signature === undefined || keyId === '' || signature === '') return 'missing';
    await this.refresh();
    const known = this.keys.get(keyId);
    if (known === undefined) return 'unknown_key';
    if (!known.current) return 'not_current';
    if (signature.length > MAX_SIGNATURE_LENGTH || !BASE64.test(signature)) return 'malformed';
    try {
      return verify('sha256', body, known.key, Buffer.from(signature, 'base64')) ? undefined : 'wrong';
    } catch {
      return 'malformed'; // not a DER signature
    }
  }

  /** Reads the file again when it changed, at most once per KEYS_FILE_RECHECK_MS. */
  private async refresh(): Promise<void> {
    if (this.clock.now().getTime() - this.checkedAtMs < KEYS_FILE_RECHECK_MS) return;
    this.reloading ??= this.reload(false).finally(() => (this.reloading = undefined));
    await this.reloading;
  }

  private async reload(first: boolean): Promise<void> {
    const path = this.config.secretScanningGithubKeys;
    if (path === undefined) return;
    this.checkedAtMs = this.clock.now().getTime();
    try {
      const { size, mtimeMs } = await stat(path);
      const version = `${size}:${mtimeMs}`;
      if (version === this.version) return;
      if (size > MAX_KEYS_FILE_BYTES) throw new Error(`it is larger than ${MAX_KEYS_FILE_BYTES} bytes`);
      this.keys = parseGithubPublicKeys(await readFile(path, 'utf8'));
      this.version = version;
      const current = [...this.keys].filter(([, key]) => key.current).map(([id]) => id);
      this.logger.log(
        `read ${this.keys.size} GitHub secret scanning keys from ${path} (current: ${current.join(', ') || 'none'})`,
      );
    } catch (err) {
      const message = `SECRET_SCANNING_GITHUB_KEYS: ${path} cannot be used: ${(err as Error).message}`;
      if (first) throw new Error(message, { cause: err });
      this.logger.warn(`${message}; the keys read before are kept`);
    }
  }
}
