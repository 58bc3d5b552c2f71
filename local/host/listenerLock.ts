import {
  BlobServiceClient,
  type BlobLeaseClient,
  type BlockBlobClient,
  type ContainerClient,
} from "@azure/storage-blob";
import { Sleeper } from "./inflight";

/**
 * The host's singleton listener lock: a trigger that must run on one host at a time (a timer) runs only on the host
 * holding a blob lease on `azure-webjobs-hosts/locks/{hostId}/{functionId}.Listener`. The holder renews the lease
 * well inside its period; the others try to take it every recovery interval, so a host that dies hands the timer over
 * within one lease period plus one interval. (The WebJobs SDK's SingletonManager: ListenerLockPeriod 60 s,
 * ListenerLockRecoveryPollingInterval 60 s.)
 */

export const LOCKS_CONTAINER = "azure-webjobs-hosts";

export interface ListenerLockOptions {
  /** 15-60 s, as Blob leases allow; default 60. */
  leaseSeconds?: number;
  /** How often a host without the lock tries to take it; default 60 s. */
  recoveryPollMs?: number;
  onError?: (err: unknown) => void;
}

export interface Startable {
  start(): Promise<void>;
  stop(): Promise<void>;
}

const statusOf = (err: unknown) => (err as { statusCode?: number }).statusCode;

export interface LockBlob {
  container: ContainerClient;
  blob: BlockBlobClient;
}

export function listenerLockBlob(connectionString: string, hostId: string, functionName: string): LockBlob {
  const container = BlobServiceClient.fromConnectionString(connectionString).getContainerClient(LOCKS_CONTAINER);
  return { container, blob: container.getBlockBlobClient(`locks/${hostId}/${functionName}.Listener`) };
}

/**
 * Runs a listener (a fresh one each time the lock is taken) only while this host holds the function's lease; see the
 * module comment.
 */
export class SingletonListener {
  readonly #where: LockBlob;
  readonly #lease: BlobLeaseClient;
  readonly #leaseSeconds: number;
  readonly #recoveryPollMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #sleeper = new Sleeper();
  #loop: Promise<void> | undefined;
  #running = false;
  #listener: Startable | undefined;

  constructor(
    where: LockBlob,
    private readonly makeListener: () => Startable,
    options: ListenerLockOptions = {},
  ) {
    this.#where = where;
    this.#lease = where.blob.getBlobLeaseClient();
    this.#leaseSeconds = options.leaseSeconds ?? 60;
    if (this.#leaseSeconds < 15 || this.#leaseSeconds > 60)
      throw new Error(`leaseSeconds must be 15-60 (a Blob lease), got ${this.#leaseSeconds}`);
    this.#recoveryPollMs = options.recoveryPollMs ?? 60_000;
    this.#onError = options.onError ?? ((err) => console.error(err));
  }

  /** True while this host holds the lock and runs the listener. */
  get holding(): boolean {
    return this.#running;
  }

  /** Takes the lock if free (and starts the listener); either way keeps trying or renewing in the background. */
  async start(): Promise<void> {
    if (await this.#tryAcquire()) await this.#startListener();
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#sleeper.abort();
    await this.#loop;
    if (this.#running) {
      this.#running = false;
      await this.#listener?.stop();
      // Released at once, so another host takes over without waiting for the lease to run out.
      await this.#lease.releaseLease().catch(() => undefined);
    }
  }

  async #startListener(): Promise<void> {
    try {
      this.#listener = this.makeListener();
      await this.#listener.start();
      this.#running = true;
    } catch (err) {
      await this.#lease.releaseLease().catch(() => undefined);
      throw err;
    }
  }

  async #run(): Promise<void> {
    while (!this.#sleeper.aborted) {
      // Renew at a third of the period: two renewals may fail before the lease is lost.
      await this.#sleeper.sleep(this.#running ? (this.#leaseSeconds * 1000) / 3 : this.#recoveryPollMs);
      if (this.#sleeper.aborted) return;
      try {
        if (this.#running) {
          if (!(await this.#renew())) {
            // Someone else holds it now (our lease ran out): stop running the trigger here.
            this.#running = false;
            await this.#listener?.stop();
          }
        } else if (await this.#tryAcquire()) {
          await this.#startListener();
        }
      } catch (err) {
        this.#onError(err);
      }
    }
  }

  async #tryAcquire(): Promise<boolean> {
    try {
      await this.#lease.acquireLease(this.#leaseSeconds);
      return true;
    } catch (err) {
      if (statusOf(err) === 409) return false;
      if (statusOf(err) !== 404) throw err;
    }
    // First use: the container and the empty lock blob.
    await this.#where.container.createIfNotExists();
    try {
      await this.#where.blob.upload("", 0, { conditions: { ifNoneMatch: "*" } });
    } catch (err) {
      if (statusOf(err) !== 409 && statusOf(err) !== 412) throw err;
    }
    try {
      await this.#lease.acquireLease(this.#leaseSeconds);
      return true;
    } catch (err) {
      if (statusOf(err) === 409) return false;
      throw err;
    }
  }

  async #renew(): Promise<boolean> {
    try {
      await this.#lease.renewLease();
      return true;
    } catch (err) {
      if (statusOf(err) === 409 || statusOf(err) === 404) return false;
      throw err;
    }
  }
}
