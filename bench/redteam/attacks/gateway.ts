/**
 * Point 7 of issue 26: the gateway remembers what it must. A page-link code traded for the
 * token is traded again after a restart (the same data folder, SQLite).
 */
import { join } from "node:path";
import { startGateway } from "../../../src/gateway/start-gateway.js";
import { type Attack, onGround } from "../attack.js";

/** Trades `link`'s code at its gateway; the HTTP status. */
async function trade(link: string): Promise<number> {
  const [url, code] = link.split("/#code=") as [string, string];
  const response = await fetch(`${url}/api/link-codes/redeem`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  await response.arrayBuffer();
  return response.status;
}

export const attacks: Attack[] = [
  {
    name: "trade a page-link code again after the gateway restarts",
    wall: "gateway",
    run: () =>
      onGround(async (ground) => {
        const dataDir = join(ground.home, ".rudder");
        const first = await startGateway({ dataDir, port: 0 });
        const link = first.pageLink;
        const statuses = [await trade(link)];
        await first.close();
        const second = await startGateway({ dataDir, port: 0 });
        try {
          // The same code, at the restarted gateway's address.
          const again = `${second.pageLink.split("/#code=")[0]}/#code=${link.split("/#code=")[1]}`;
          statuses.push(await trade(again));
        } finally {
          await second.close();
        }
        return statuses[0] === 200 && statuses[1] === 401
          ? { held: true, detail: "traded once (200), refused after the restart (401)" }
          : {
              held: false,
              detail: `statuses before and after the restart: ${statuses.join(", ")}`,
            };
      }),
  },
];
