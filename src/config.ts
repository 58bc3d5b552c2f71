import { z } from "zod";
import { parseBindings } from "./core/bindings";
import { weakKeyReason } from "./core/keyStrength";
import { parseScope, type Scope } from "./core/scopes";
import { CLOUD_NAMES, CLOUDS, type AzureCloud } from "./core/clouds";

/**
 * Every setting poolsync reads, validated once, with its default. A missing or malformed setting fails at start
 * with a message that names it; nothing reads process.env anywhere else.
 */

const boolean = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ["true", "false", "1", "0", "yes", "no"].includes(v), "must be true or false")
  .transform((v) => v === "true" || v === "1" || v === "yes");

const positiveInt = (max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `must be between 1 and ${max}`);

const positiveSeconds = (max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/, "must be a number of seconds")
    .transform(Number)
    .refine((n) => n >= 0.01 && n <= max, `must be between 0.01 and ${max}`);

const nonNegativeInt = (max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, "must be a whole number")
    .transform(Number)
    .refine((n) => n <= max, `must be between 0 and ${max}`);

const httpUrl = z
  .string()
  .trim()
  .refine((v) => {
    try {
      const u = new URL(v);
      return u.protocol === "https:" || u.protocol === "http:";
    } catch {
      return false;
    }
  }, "must be an http(s) URL")
  .transform((v) => v.replace(/\/+$/, ""));

/**
 * Queue and table names must satisfy Azure Storage's rules; checked here so a typo fails at start, not at first use.
 */
const queueName = z
  .string()
  .trim()
  .regex(
    /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/,
    "must be a valid Storage queue name (3-63 lowercase letters, digits, single dashes)",
  );
const tableName = z
  .string()
  .trim()
  .regex(
    /^[A-Za-z][A-Za-z0-9]{2,62}$/,
    "must be a valid Storage table name (3-63 letters and digits, starting with a letter)",
  );

const scopes = z
  .string()
  .trim()
  .min(1, "is required: a comma-separated list of /subscriptions/{id} or /subscriptions/{id}/resourceGroups/{name}")
  .transform((v, ctx) => {
    const out: Scope[] = [];
    for (const part of v
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const parsed = parseScope(part);
      if (!parsed.ok) {
        ctx.addIssue({ code: "custom", message: `"${part}": ${parsed.reason}` });
        return z.NEVER;
      }
      out.push(parsed.value);
    }
    if (out.length === 0) {
      ctx.addIssue({ code: "custom", message: "names no scope" });
      return z.NEVER;
    }
    return out;
  });

const bindings = z.string().transform((v, ctx) => {
  const parsed = parseBindings(v);
  if (!parsed.ok) {
    ctx.addIssue({ code: "custom", message: parsed.reason });
    return z.NEVER;
  }
  return parsed.value;
});

/**
 * One declaration of a setting: the Config field it fills (`key`), how its text is read (`schema`, ending in the
 * field's value), its `default` (undefined = required) and what it means (`doc`, the table in docs/settings.md).
 * `template` says why infra/main.json does not set it to the default: `secret` (the template provisions it itself),
 * `unset` (left to the platform or the operator) or `cloud` (the template sets the cloud it is deployed to).
 */
export interface SettingSpec<K extends string = string, S extends z.ZodType = z.ZodType> {
  key: K;
  schema: S;
  default: string | undefined;
  doc: string;
  template?: "secret" | "unset" | "cloud";
}

function setting<const K extends string, S extends z.ZodType>(spec: SettingSpec<K, S>): SettingSpec<K, S> {
  return spec;
}

const toMs = (unit: number) => (n: number) => Math.round(n * unit);

/** At least this many characters of POOLSYNC_CACHE_KEY. */
export const MIN_KEY_CHARS = 32;

/**
 * Empty is allowed (a random key per process); anything else must look random (src/core/keyStrength.ts): a weak key
 * lets whoever guesses it forge cache rows, the bodies poolsync writes to ARM with its identity. The key itself is
 * never echoed (SettingSpec.template "secret").
 */
const cacheKey = z
  .string()
  .trim()
  .superRefine((v, ctx) => {
    const weak = v === "" ? undefined : weakKeyReason(v, MIN_KEY_CHARS);
    if (weak)
      ctx.addIssue({
        code: "custom",
        message: `is weak: it ${weak}; use at least ${MIN_KEY_CHARS} random characters (e.g. openssl rand -base64 48), or leave it empty for a random key per process`,
      });
  });

/** Setting name → its declaration. Config, loadConfig and docs/settings.md are derived from these. */
export const SETTINGS = {
  POOLSYNC_SCOPES: setting({
    key: "scopes",
    schema: scopes,
    default: undefined,
    doc: "Subscriptions or resource groups poolsync may read and write, comma-separated ARM IDs.",
  }),
  POOLSYNC_BINDINGS: setting({
    key: "bindings",
    schema: bindings,
    default: undefined,
    doc: "Which targets may join which backend pools (docs/bindings.md): rules `[scaleSets|vms|both:] target => pool` of ARM ID prefixes (`*` = any one segment, `{sub}` = the same segment on both sides), separated by `;`; `*` alone = any pairing inside POOLSYNC_SCOPES. Checked at intake and before every write, for present and absent alike.",
  }),
  POOLSYNC_AUTH: setting({
    key: "auth",
    schema: z.enum(["entra", "key"]),
    default: "entra",
    doc: "entra = callers authenticated by App Service authentication (Microsoft Entra ID), roles `poolsync.Read` (status, show) and `poolsync.Declare` (declare) read from `x-ms-client-principal`; key = the documented fallback: a function key, whose holders may do everything (docs/api.md).",
  }),
  POOLSYNC_CLOUD: setting({
    key: "cloudName",
    schema: z.enum(CLOUD_NAMES),
    default: "AzureCloud",
    template: "cloud",
    doc: "The Azure cloud: AzureCloud, AzureUSGovernment or AzureChinaCloud. Picks Resource Manager's endpoint (unless ARM_ENDPOINT says otherwise), the audience of its tokens, the Microsoft Entra authority host and the storage suffix of `AzureWebJobsStorage__accountName`. The template sets it from the cloud it is deployed to.",
  }),
  ARM_ENDPOINT: setting({
    key: "armEndpointOverride",
    schema: z.union([z.literal(""), httpUrl]),
    default: "",
    doc: "Azure Resource Manager endpoint; empty = POOLSYNC_CLOUD's (https://management.azure.com, https://management.usgovcloudapi.net, https://management.chinacloudapi.cn); the simulator's URL locally. Tokens are asked for POOLSYNC_CLOUD's audience either way.",
  }),
  POOLSYNC_ARM_CREDENTIAL: setting({
    key: "armCredential",
    schema: z.enum(["auto", "default", "managedIdentity", "static"]),
    default: "auto",
    doc: "managedIdentity = the app's managed identity (`AZURE_CLIENT_ID` picks a user-assigned one); default = DefaultAzureCredential; static = a fixed bearer token (the simulator). auto picks static only for a loopback endpoint (127.0.0.1, ::1, localhost), managedIdentity in App Service (`IDENTITY_ENDPOINT` set), default otherwise.",
  }),
  POOLSYNC_ARM_STATIC_TOKEN: setting({
    key: "armStaticToken",
    schema: z.string().min(1),
    default: "poolsync-simulator-token",
    doc: "The bearer token sent with the static credential (the simulator accepts any).",
  }),
  POOLSYNC_QUEUE: setting({
    key: "queueName",
    schema: queueName,
    default: "backendpool-updates",
    doc: "Queue of declare/reconcile messages; its poison queue is <name>-poison.",
  }),
  POOLSYNC_MEMBERSHIPS_TABLE: setting({
    key: "membershipsTable",
    schema: tableName,
    default: "memberships",
    doc: "The targets table: one partition per target, holding its declarations (the durable intent), control row, cache rows and history.",
  }),
  POOLSYNC_CACHE_TABLE: setting({
    key: "cacheTable",
    schema: tableName,
    default: "etagcache",
    doc: 'The shared table: what is not one target\'s, one partition each: resource owners ("~owners"), the problem log ("~problems"), the timer\'s state ("~timer") and its census summary ("~census"), events about resources poolsync holds nothing for ("~events") and the write budgets hosts share ("~budgets"); after an upgrade in place, the old one-table layout\'s rows until the timer has swept them. It holds no cache rows (they are in each target\'s partition of POOLSYNC_MEMBERSHIPS_TABLE): the name is the one the ETag cache had before the one-partition-per-target layout.',
  }),
  POOLSYNC_CACHE_ENABLED: setting({
    key: "cacheEnabled",
    schema: boolean,
    default: "true",
    doc: "false = always GET from ARM before a write (the cache is only an optimisation).",
  }),
  POOLSYNC_CACHE_TTL_SECONDS: setting({
    key: "cacheTtlMs",
    schema: positiveInt(86_400).transform(toMs(1000)),
    default: "600",
    doc: "Age after which a cached model is re-read before use and revisited by the timer: with an event lost, a deleted scale set or another writer's change shows within one TTL plus one timer period.",
  }),
  POOLSYNC_MAX_PRECONDITION_RETRIES: setting({
    key: "maxPreconditionRetries",
    schema: nonNegativeInt(20),
    default: "5",
    doc: "Re-reads after a 412 within one reconcile before it is re-enqueued.",
  }),
  POOLSYNC_INSTANCE_CONCURRENCY: setting({
    key: "instanceConcurrency",
    schema: positiveInt(64),
    default: "10",
    doc: "Instance writes in flight at once for one scale set (each instance has its own CRP budget; the shared ones are paced).",
  }),
  POOLSYNC_WRITE_DOUBT_SECONDS: setting({
    key: "writeDoubtMs",
    schema: positiveInt(86_400).transform(toMs(1000)),
    default: "120",
    doc: "A write whose answer never came (a timeout, a dropped connection, a 5xx) may still reach ARM for this long: while the resource keeps the ETag it was conditional on, no declaration about it is reported finished.",
  }),
  POOLSYNC_INSTANCE_BODY_MAX_AGE_SECONDS: setting({
    key: "instanceBodyMaxAgeMs",
    schema: positiveInt(3_600).transform(toMs(1000)),
    default: "30",
    doc: "An instance read longer ago than this is read again (GET) before poolsync writes it: Azure reuses the IDs of deleted instances and a new VM under an old ID can reach the old body's ETag, so keep this below the fastest your scale sets delete and recreate an instance.",
  }),
  POOLSYNC_EVENT_DEBOUNCE_SECONDS: setting({
    key: "eventDebounceMs",
    schema: nonNegativeInt(3_600).transform(toMs(1000)),
    default: "10",
    doc: "At most one event-triggered reconcile per scale set per window.",
  }),
  POOLSYNC_RECONCILE_SCHEDULE: setting({
    key: "reconcileSchedule",
    schema: z.string().trim().min(1),
    default: "0 */5 * * * *",
    doc: "NCRONTAB schedule of the reconcileStale timer.",
  }),
  POOLSYNC_RECONCILE_MAX_READS: setting({
    key: "reconcileMaxReads",
    schema: positiveInt(100_000),
    default: "200",
    doc: "ARM requests the timer may spend in one run: each page of a resource group's scale set LIST, each GET and each VM LIST counts one.",
  }),
  POOLSYNC_PLAN_MAX_READS: setting({
    key: "planMaxReads",
    schema: positiveInt(10_000),
    default: "50",
    doc: "ARM requests one plan (GET /api/plan, or a dry run) may make: each GET and each LIST counts one. Past it, what was not read is named in the answer (`reads.cutShort`, `reads.notRead`) and not planned.",
  }),
  POOLSYNC_IDLE_EVICT_HOURS: setting({
    key: "idleEvictMs",
    schema: positiveInt(24 * 365).transform(toMs(3_600_000)),
    default: "24",
    doc: "Cache rows of scale sets nobody declares for and nobody touched for this long are evicted.",
  }),
  POOLSYNC_ARM_CA_FILE: setting({
    key: "armCaFile",
    schema: z.string(),
    default: "",
    doc: "PEM file of an extra CA to trust for ARM_ENDPOINT (the simulator's test certificate); empty = the system's CAs only.",
  }),
  POOLSYNC_ARM_TIMEOUT_SECONDS: setting({
    key: "armTimeoutMs",
    schema: positiveInt(600).transform(toMs(1000)),
    default: "30",
    doc: "Timeout of one ARM request; a write that timed out is re-checked from fresh state.",
  }),
  POOLSYNC_TABLE_TIMEOUT_SECONDS: setting({
    key: "tableTimeoutMs",
    schema: positiveInt(600).transform(toMs(1000)),
    default: "30",
    doc: "Timeout of one Table Storage request: a storage account that accepts and never answers fails the call instead of holding the invocation.",
  }),
  POOLSYNC_OPERATION_MAX_WAIT_SECONDS: setting({
    key: "operationMaxWaitMs",
    schema: positiveInt(3_600).transform(toMs(1000)),
    default: "300",
    doc: "How long one invocation waits for a Compute long-running operation before re-enqueueing.",
  }),
  POOLSYNC_OPERATION_POLL_SECONDS: setting({
    key: "operationPollMs",
    schema: positiveSeconds(600).transform(toMs(1000)),
    default: "5",
    doc: "Polling interval of long-running operations when ARM sends no Retry-After or Retry-After: 0 (as the Azure SDKs read it); fractions allowed.",
  }),
  POOLSYNC_MAX_ATTEMPTS: setting({
    key: "maxAttempts",
    schema: positiveInt(100),
    default: "8",
    doc: "Re-enqueued attempts of one reconcile that failed (a 429, a 409, no answer) before its declarations show failed; a wait (poolsync's own pacing, Network RP busy, a write in doubt) comes back whatever the count and does not add to it.",
  }),
  POOLSYNC_PACING_ENABLED: setting({
    key: "pacingEnabled",
    schema: boolean,
    default: "true",
    doc: "Spread writes inside CRP's and ARM's write budgets instead of running into 429.",
  }),
  POOLSYNC_PACING_MAX_WAIT_SECONDS: setting({
    key: "pacingMaxWaitMs",
    schema: nonNegativeInt(600).transform(toMs(1000)),
    default: "5",
    doc: "Longest pause for the write or read budget (a read 429's Retry-After included) inside one invocation; a longer one re-enqueues the reconcile.",
  }),
  POOLSYNC_DECLARE_WINDOW_SECONDS: setting({
    key: "declareWindowMs",
    schema: nonNegativeInt(300).transform(toMs(1000)),
    default: "2",
    doc: "Declarations of one scale set arriving close together share a reconcile, across instances: the first of a quiet scale set (no window for twice this long, host not in a backlog) reconciles at once; the next enqueues one for the window's end (at once if the host is busy), joined by others until its pass runs. 0 = at once.",
  }),
  POOLSYNC_GATHER_MILLISECONDS: setting({
    key: "gatherMs",
    schema: nonNegativeInt(60_000),
    default: "250",
    doc: "How long a reconcile waits before it reads the declarations, so that declarations arriving together make one write. A leading declaration's (the first of a quiet scale set) does not wait: what arrives while it runs joins the next pass.",
  }),
  POOLSYNC_FAILED_RETRY_SECONDS: setting({
    key: "failedRetryMs",
    schema: positiveInt(86_400).transform(toMs(1000)),
    default: "300",
    doc: "When a declaration whose last attempt failed is tried again by the timer.",
  }),
  POOLSYNC_RECONCILE_LEASE_SECONDS: setting({
    key: "reconcileLeaseMs",
    schema: positiveInt(3_600).transform(toMs(1000)),
    default: "60",
    doc: "One reconcile of a scale set at a time across hosts: the lease a reconcile holds (renewed while it runs); a host that dies holding it lets go after this long.",
  }),
  POOLSYNC_CACHE_KEY: setting({
    key: "cacheKey",
    schema: cacheKey,
    default: "",
    template: "secret",
    doc: "HMAC key of cache rows, the same on every host (docs/bindings.md): at least 32 random characters, and a weak one (a placeholder such as changeme, a repeated pattern, a run like abcd…, too few bits by its character counts) is refused at load; empty = a random key per process, so a host reads only the rows it stored.",
  }),
  POOLSYNC_PRINCIPAL_STRIPPED_BY: setting({
    key: "principalStrippedBy",
    schema: z.string().trim(),
    default: "",
    template: "unset",
    doc: "Names the platform that strips a client's own x-ms-client-principal where App Service authentication does not (WEBSITE_AUTH_ENABLED); empty = with POOLSYNC_AUTH=entra outside it, the API refuses every call.",
  }),
} as const;

export type SettingName = keyof typeof SETTINGS;

/**
 * The host's own key check on the HTTP functions: only in the key fallback. With Entra ID, App Service
 * authentication stands in front and the app checks the roles; a key on top would be one more shared secret.
 * Read when the functions are registered, before any other setting is.
 */
export function httpAuthLevel(env: Record<string, string | undefined> = process.env): "anonymous" | "function" {
  return (env.POOLSYNC_AUTH ?? "").trim().toLowerCase() === "key" ? "function" : "anonymous";
}

type Settings = typeof SETTINGS;

/** Each setting's value, under its key. */
export type SettingValues = { -readonly [N in SettingName as Settings[N]["key"]]: z.output<Settings[N]["schema"]> };

export type Config = Omit<
  SettingValues,
  "armCredential" | "principalStrippedBy" | "armEndpointOverride" | "cloudName"
> & {
  /** POOLSYNC_CLOUD: Resource Manager's audience, the authority host, the storage suffix. */
  cloud: AzureCloud;
  /** ARM_ENDPOINT, or the cloud's Resource Manager. */
  armEndpoint: string;
  /** "auto" resolved (see POOLSYNC_ARM_CREDENTIAL). */
  armCredential: "default" | "managedIdentity" | "static";
  /**
   * Set when POOLSYNC_AUTH is entra in App Service but App Service authentication is off: then nothing strips a
   * forged x-ms-client-principal, so the API refuses every call rather than trust it.
   */
  authUnprotected?: string;
  /** The user-assigned identity for ARM (AZURE_CLIENT_ID, as DefaultAzureCredential reads it). */
  armClientId?: string;
  poisonQueueName: string;
  storage: StorageConnection;
};

/**
 * The AzureWebJobsStorage connection, as the Functions host reads it: a connection string (Azurite locally), or
 * identity-based (`__accountName` or `__tableServiceUri`/`__queueServiceUri`, with `__credential`/`__clientId`).
 */
export type StorageConnection =
  | { kind: "connectionString"; connectionString: string }
  | { kind: "identity"; tableServiceUri: string; queueServiceUri: string; clientId: string | undefined };

export const STORAGE_CONNECTION = "AzureWebJobsStorage";

function readStorage(
  env: Record<string, string | undefined>,
  storageSuffix: string,
  problems: string[],
): StorageConnection | undefined {
  const cs = env[STORAGE_CONNECTION];
  if (cs && cs.trim() !== "") {
    const value = cs.trim() === "UseDevelopmentStorage=true" ? DEVELOPMENT_STORAGE : cs.trim();
    if (!/AccountName=|TableEndpoint=|SharedAccessSignature=/i.test(value)) {
      problems.push(`${STORAGE_CONNECTION} is not a storage connection string (no AccountName or endpoints)`);
      return undefined;
    }
    return { kind: "connectionString", connectionString: value };
  }
  const account = env[`${STORAGE_CONNECTION}__accountName`]?.trim();
  const tableServiceUri =
    env[`${STORAGE_CONNECTION}__tableServiceUri`]?.trim() ||
    (account ? `https://${account}.table.${storageSuffix}` : undefined);
  const queueServiceUri =
    env[`${STORAGE_CONNECTION}__queueServiceUri`]?.trim() ||
    (account ? `https://${account}.queue.${storageSuffix}` : undefined);
  if (!tableServiceUri || !queueServiceUri) {
    problems.push(
      `${STORAGE_CONNECTION} is required: a connection string, or ${STORAGE_CONNECTION}__accountName for a managed identity`,
    );
    return undefined;
  }
  if (account !== undefined && !/^[a-z0-9]{3,24}$/.test(account)) {
    problems.push(
      `${STORAGE_CONNECTION}__accountName=${JSON.stringify(account)} is not a storage account name (3-24 lowercase letters and digits)`,
    );
    return undefined;
  }
  return {
    kind: "identity",
    tableServiceUri,
    queueServiceUri,
    clientId: env[`${STORAGE_CONNECTION}__clientId`]?.trim() || undefined,
  };
}

/** What UseDevelopmentStorage=true means: Azurite's well-known account on its default ports (not a secret). */
export const DEVELOPMENT_STORAGE =
  "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
  "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;";

/** A loopback host: the only place the simulator's static token may be sent to. */
export function isLoopback(endpoint: string): boolean {
  const host = new URL(endpoint).hostname.toLowerCase();
  return host === "localhost" || host === "[::1]" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

function read<N extends SettingName>(
  env: Record<string, string | undefined>,
  name: N,
  problems: string[],
): z.output<(typeof SETTINGS)[N]["schema"]> | undefined {
  const spec: SettingSpec = SETTINGS[name];
  // An empty setting counts as unset: app settings cannot always be deleted, only blanked.
  const given = env[name];
  const raw = given === undefined || given.trim() === "" ? spec.default : given;
  if (raw === undefined) {
    problems.push(`${name} is required: ${spec.doc}`);
    return undefined;
  }
  const parsed = (spec.schema as z.ZodType).safeParse(raw);
  if (!parsed.success) {
    const shown = spec.template === "secret" ? "" : `=${JSON.stringify(raw)}`;
    problems.push(`${name}${shown} ${parsed.error.issues.map((i) => i.message).join("; ")}`);
    return undefined;
  }
  return parsed.data as z.output<(typeof SETTINGS)[N]["schema"]>;
}

/** Reads and validates every setting; throws one ConfigError listing every problem. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(SETTINGS) as SettingName[]) values[SETTINGS[name].key] = read(env, name, problems);
  const cloud = CLOUDS[(values.cloudName as SettingValues["cloudName"] | undefined) ?? "AzureCloud"];
  const storage = readStorage(env, cloud.storageSuffix, problems);
  // The targets table's partitions are targets' keys; the shared table's old-layout sweep deletes such partitions.
  if (
    typeof values.membershipsTable === "string" &&
    String(values.membershipsTable).toLowerCase() === String(values.cacheTable).toLowerCase()
  )
    problems.push(
      "POOLSYNC_CACHE_TABLE: must name another table than POOLSYNC_MEMBERSHIPS_TABLE (the targets table and the shared table are kept apart)",
    );
  if (problems.length > 0 || storage === undefined) {
    throw new ConfigError(`poolsync settings are invalid:\n- ${problems.join("\n- ")}`);
  }
  const {
    armCredential,
    principalStrippedBy,
    armEndpointOverride,
    cloudName: _cloud,
    ...rest
  } = values as SettingValues;
  const v = { ...rest, armEndpoint: armEndpointOverride || cloud.resourceManager };
  return {
    ...v,
    cloud,
    // The principal header is trusted only where something strips a client's own copy: App Service authentication
    // (WEBSITE_AUTH_ENABLED=True), or a platform the operator names (POOLSYNC_PRINCIPAL_STRIPPED_BY). Anywhere else
    // (func start, the Functions image on another host) anyone could send it, so the API refuses every call instead.
    ...(v.auth === "entra" && !/^true$/i.test(env.WEBSITE_AUTH_ENABLED?.trim() ?? "") && !principalStrippedBy
      ? {
          authUnprotected:
            "POOLSYNC_AUTH is entra but nothing is known to strip a client's x-ms-client-principal (WEBSITE_AUTH_ENABLED is not True and POOLSYNC_PRINCIPAL_STRIPPED_BY is unset)",
        }
      : {}),
    // "auto": the simulator's static token only on this machine; anything else (ARM in any cloud) gets a real
    // credential. In App Service only the managed identity: DefaultAzureCredential would try environment secrets first.
    armCredential:
      armCredential === "auto"
        ? isLoopback(v.armEndpoint)
          ? "static"
          : env.IDENTITY_ENDPOINT
            ? "managedIdentity"
            : "default"
        : armCredential,
    ...(env.AZURE_CLIENT_ID?.trim() ? { armClientId: env.AZURE_CLIENT_ID.trim() } : {}),
    poisonQueueName: `${v.queueName}-poison`,
    storage,
  };
}
