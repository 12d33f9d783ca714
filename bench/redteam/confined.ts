/**
 * A sandbox session for the network and secrets attacks: like `sandboxSession`, with the
 * agent's environment (which names the gateway's data folder and credential folders), a
 * workspace anywhere on the ground, and the proxy's resolver, and the listeners an attack
 * watches (a canary service that counts who reached it).
 */
import { createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { Sandbox } from "../../src/sandbox/sandbox.js";
import { sandboxPolicy } from "../../src/sandbox/sandbox-policy.js";
import type { SandboxSettings } from "../../src/sandbox/sandbox-settings.js";
import { runCommand } from "../../src/tools/run-command.js";
import type { AttackGround } from "./attack.js";

export interface ConfinedOptions {
  settings?: SandboxSettings;
  /** The agent's environment as the policy reads it (`RUDDER_GATEWAY_DATA`, `GH_CONFIG_DIR`...). */
  env?: NodeJS.ProcessEnv;
  /** The workspace, default the ground's. */
  workspace?: string;
}

/** A sandbox session on `ground`; `run` runs `commands` (joined by `;`) in it and returns their output. */
export function confinedSession(
  ground: AttackGround,
  options: ConfinedOptions = {},
): { run: (commands: string[]) => Promise<string>; close: () => void } {
  const workspace = options.workspace ?? ground.workspace;
  const sandbox = new Sandbox(
    sandboxPolicy(options.settings ?? {}, {
      workspace,
      home: ground.home,
      rudderHome: join(ground.home, ".rudder"),
      env: options.env ?? {},
    }),
    { env: process.env },
  );
  return {
    run: async (commands) =>
      (await runCommand(commands.join("; "), { cwd: workspace, timeoutMs: 30_000, sandbox }))
        .output,
    close: () => sandbox.close(),
  };
}

/** Runs `commands` (joined by `;`) in a fresh sandbox session and returns their output. */
export async function runConfined(
  ground: AttackGround,
  commands: string[],
  options: ConfinedOptions = {},
): Promise<string> {
  const session = confinedSession(ground, options);
  try {
    return await session.run(commands);
  } finally {
    session.close();
  }
}

export interface Canary {
  /** How many connections reached it. */
  connections(): number;
  close(): void;
}

/** A service that counts connections and answers "canary reached": on a TCP `port` or a unix path. */
export async function canaryService(
  where: { host: string } | { path: string },
): Promise<Canary & { port: number }> {
  let count = 0;
  const server: Server = createServer((socket) => {
    count += 1;
    socket.end("canary reached\n");
  });
  await new Promise<void>((resolve) => {
    if ("path" in where) server.listen(where.path, resolve);
    else server.listen(0, where.host, resolve);
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address !== null ? address.port : 0,
    connections: () => count,
    close: () => server.close(),
  };
}

/** This machine's own IPv4 addresses other than loopback (where a gateway on 0.0.0.0 answers). */
export function ownAddresses(): string[] {
  return Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .filter((entry) => entry.family === "IPv4" && !entry.internal)
    .map((entry) => entry.address);
}

/** Python that sends `request` (a JS string, NULs allowed) to host:port and prints the answer's first line. */
export function rawRequest(host: string, port: number, request: string): string {
  const bytes = Buffer.from(request, "latin1").toString("base64");
  return (
    `python3 -c "import socket, base64; s = socket.create_connection(('${host}', ${port}), 5); ` +
    `s.sendall(base64.b64decode('${bytes}')); print('answer:', s.recv(200).split(b'\\r\\n')[0].decode())" 2>&1 | tail -1`
  );
}
