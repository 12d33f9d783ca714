/**
 * Point 2 of issue 26: no way out through the network or the host's sockets. The domain
 * proxy is sent a host name with a NUL and a port past 65535; a unix socket under $HOME (a
 * docker socket) and a service on all interfaces (the gateway with --host 0.0.0.0) are tried
 * from the sandbox. A canary service counts who reached it.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { BRIDGE_PORT } from "../../../src/sandbox/proxy-bridge.js";
import { type Attack, onGround } from "../attack.js";
import { canaryService, ownAddresses, rawRequest, runConfined } from "../confined.js";
import { noBubblewrap } from "../sandboxed.js";

const PROXIED = { network: { allowedDomains: ["*.example.com", "example.com"] } };

export const attacks: Attack[] = [
  {
    name: "proxy: CONNECT <this machine>\\0.example.com (a NUL in the host name)",
    wall: "network",
    skip: () =>
      noBubblewrap() ?? (ownAddresses().length === 0 ? "no address but loopback" : undefined),
    run: () =>
      onGround(async (ground) => {
        const canary = await canaryService({ host: "0.0.0.0" });
        try {
          const target = `${ownAddresses()[0]}\0.example.com:${canary.port}`;
          const output = await runConfined(
            ground,
            [rawRequest("127.0.0.1", BRIDGE_PORT, `CONNECT ${target} HTTP/1.1\r\n\r\n`)],
            { settings: PROXIED },
          );
          const answer = output.trim().split("\n").pop() ?? "";
          return canary.connections() === 0
            ? { held: true, detail: `the proxy answered "${answer.replace("answer: ", "")}"` }
            : { held: false, detail: "the proxy connected to the address before the NUL" };
        } finally {
          canary.close();
        }
      }),
  },
  {
    name: "proxy: CONNECT example.com:99999 (a port past 65535)",
    wall: "network",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        // The proxy runs in this process: a throw in it would end the run here.
        const output = await runConfined(
          ground,
          [
            rawRequest("127.0.0.1", BRIDGE_PORT, "CONNECT example.com:99999 HTTP/1.1\r\n\r\n"),
            rawRequest("127.0.0.1", BRIDGE_PORT, "GET http://other.test/ HTTP/1.1\r\n\r\n"),
          ],
          { settings: PROXIED },
        );
        const answers = output.split("\n").filter((line) => line.startsWith("answer:"));
        return answers[0]?.includes("400") === true && answers[1]?.includes("403") === true
          ? { held: true, detail: "400 for the bad port, and the proxy still answers after it" }
          : { held: false, detail: `answers: ${JSON.stringify(output.slice(-200))}` };
      }),
  },
  {
    name: "unix socket under $HOME (~/.colima/docker.sock)",
    wall: "network",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        mkdirSync(join(ground.home, ".colima"));
        const socket = join(ground.home, ".colima", "docker.sock");
        const canary = await canaryService({ path: socket });
        try {
          await runConfined(ground, [
            `python3 -c "import socket; s = socket.socket(socket.AF_UNIX); s.connect('${socket}'); print(s.recv(100))"`,
            `curl -s --unix-socket ${socket} http://docker/version`,
            `node -e "require('net').connect('${socket}').on('data', (d) => console.log(String(d)))"`,
          ]);
          return canary.connections() === 0
            ? { held: true, detail: "python, curl and node could not connect to it" }
            : { held: false, detail: `${canary.connections()} connections reached the socket` };
        } finally {
          canary.close();
        }
      }),
  },
  {
    name: "a service on 0.0.0.0 (the gateway with --host 0.0.0.0), direct and through the proxy",
    wall: "network",
    skip: noBubblewrap,
    run: () =>
      onGround(async (ground) => {
        const canary = await canaryService({ host: "0.0.0.0" });
        try {
          const addresses = ["127.0.0.1", ...ownAddresses()];
          const direct = addresses.map(
            (address) => `(exec 3<>/dev/tcp/${address}/${canary.port}) 2>/dev/null`,
          );
          const proxied = addresses.map((address) =>
            rawRequest(
              "127.0.0.1",
              BRIDGE_PORT,
              `CONNECT ${address}:${canary.port} HTTP/1.1\r\n\r\n`,
            ),
          );
          await runConfined(ground, [...direct, ...proxied], {
            settings: { network: { allowedDomains: ["*.example.com", ...addresses] } },
          });
          return canary.connections() === 0
            ? { held: true, detail: `${addresses.length} addresses tried, direct and by CONNECT` }
            : { held: false, detail: `${canary.connections()} connections reached it` };
        } finally {
          canary.close();
        }
      }),
  },
];
