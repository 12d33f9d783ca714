import { createGatewayClient, type GatewayClient, readToken } from "../gateway/index.js";
import { type FlagSpecs, type ParsedArgs, stringFlag } from "./args.js";
import { readGatewayAddress } from "./gateway-address.js";
import { dataDirectory } from "./serve.js";

/** Flags shared by the small API clients (`send`, `schedule`, `permissions`, `link`). */
export const CONNECTION_FLAGS: FlagSpecs = {
  url: { type: "string" },
  data: { type: "string" },
};

export type ConnectionResult =
  | { ok: true; client: GatewayClient; url: string }
  | { ok: false; error: string };

/**
 * A client for a running gateway: `--url` (else `RUDDER_URL`, else the address the gateway of
 * the data folder wrote as it started, else http://127.0.0.1:4317) and the token from the data
 * folder's `token` file.
 */
export function connectToGateway(args: ParsedArgs, env: NodeJS.ProcessEnv): ConnectionResult {
  const dataDir = dataDirectory(stringFlag(args, "data"), env);
  const url =
    stringFlag(args, "url") ??
    env.RUDDER_URL ??
    readGatewayAddress(dataDir) ??
    "http://127.0.0.1:4317";
  let token: string;
  try {
    token = env.RUDDER_TOKEN ?? readToken(dataDir);
  } catch {
    return {
      ok: false,
      error: `no gateway token in ${dataDir}: start the gateway with "rudder serve" first (or pass --data)`,
    };
  }
  return { ok: true, client: createGatewayClient({ url, token }), url };
}
