import { join } from "node:path";
import { TLS_DIR } from "../sim/http/server";

/** The simulator's test-only CA, for POOLSYNC_ARM_CA_FILE (found from source and from dist/ alike). */
export const SIM_CA_FILE = join(TLS_DIR, "cert.pem");
