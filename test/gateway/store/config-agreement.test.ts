/**
 * Workers of one PostgreSQL database run one configuration: a worker whose configuration file
 * differs from the running workers' is refused at start with one line, one with the same joins,
 * a reload moves a worker along, and a worker gone lets go. One throwaway cluster for the file.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GatewayBindings } from "../../../src/gateway/bindings/bindings.js";
import { checkGatewayConfig } from "../../../src/gateway/bindings/load-gateway-config.js";
import { startGateway } from "../../../src/gateway/index.js";
import { ConfigAgreement } from "../../../src/gateway/store/postgres/config-agreement.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";

let cluster: PostgresCluster;
let root = "";
beforeAll(async () => {
  cluster = await startPostgresCluster();
  root = mkdtempSync(join(tmpdir(), "rudder-ws-agreement-"));
});
afterAll(async () => {
  await cluster?.destroy();
  rmSync(root, { recursive: true, force: true });
});

const hashA = "a".repeat(64);
const hashB = "b".repeat(64);

describe("the workers' agreement on the configuration", () => {
  it("refuses a worker of another configuration while one runs, and follows reloads", async () => {
    const url = await cluster.createDatabase();
    const first = await ConfigAgreement.join(url, hashA);
    if (first instanceof Error) throw first;
    const same = await ConfigAgreement.join(url, hashA);
    if (same instanceof Error) throw same;
    const other = await ConfigAgreement.join(url, hashB);
    expect(other instanceof Error && other.message).toBe(
      "the running workers use another configuration (aaaaaaa) than this worker (bbbbbbb); start every worker with the same configuration file",
    );
    const without = await ConfigAgreement.join(url, null);
    expect(without instanceof Error && without.message).toMatch(
      /than this worker \(no configuration file\)/,
    );
    // Both running workers reload the new file: a third with it joins.
    await first.change(hashB);
    expect(await ConfigAgreement.join(url, hashB)).toBeInstanceOf(Error);
    await same.change(hashB);
    const third = await ConfigAgreement.join(url, hashB);
    expect(third).toBeInstanceOf(ConfigAgreement);
    for (const agreement of [first, same, third]) await (agreement as ConfigAgreement).close();
    // Nobody runs now: any configuration may start.
    const fresh = await ConfigAgreement.join(url, hashA);
    expect(fresh).toBeInstanceOf(ConfigAgreement);
    await (fresh as ConfigAgreement).close();
  });

  it("keeps a gateway whose file differs from the running one's from starting", async () => {
    const url = await cluster.createDatabase();
    const gateway = (name: string, model: string) => {
      const loaded = checkGatewayConfig(join(root, `${name}.json`), { defaults: { model } });
      if (loaded instanceof Error) throw loaded;
      return startGateway({
        dataDir: join(root, name),
        store: { kind: "postgres", url },
        port: 0,
        workerName: name,
        bindings: new GatewayBindings(loaded, { cwd: root, engine: "rudder" }),
      });
    };
    const running = await gateway("one", "model-a");
    try {
      await expect(gateway("two", "model-b")).rejects.toThrow(
        /^the running workers use another configuration \([0-9a-f]{7}\) than this worker \([0-9a-f]{7}\)/,
      );
      const alike = await gateway("three", "model-a");
      await alike.close();
    } finally {
      await running.close();
    }
  });
});
