/**
 * The permission requests several workers share (PostgreSQL): each settled once, whoever
 * settles it. Here the owner's `PermissionRequests` over the ledger, with a person's answer
 * written as another worker writes it, and no wake-up listener, so only the database says it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermissionRequests } from "../../../src/gateway/agents/permission-requests.js";
import { EventBus } from "../../../src/gateway/event-bus.js";
import type { GatewayEvent } from "../../../src/gateway/events.js";
import { PostgresGatewayStore } from "../../../src/gateway/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgresCluster } from "../../helpers/postgres-cluster.js";
import { waitFor } from "../../helpers/wait-for.js";

let cluster: PostgresCluster;
const stores: PostgresGatewayStore[] = [];
beforeAll(async () => {
  cluster = await startPostgresCluster();
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await cluster?.destroy();
});

async function owner(timeoutMs: number) {
  const store = await PostgresGatewayStore.open(await cluster.createDatabase());
  stores.push(store);
  await store.channelLeases("owner", 15).claim("c");
  const bus = new EventBus();
  const events: GatewayEvent[] = [];
  bus.listen("c", (numbered) => events.push(numbered.event));
  const ledger = store.permissionLedger();
  const permissions = new PermissionRequests({
    bus,
    timeoutMs,
    shared: { worker: "owner", ledger },
  });
  return { store, ledger, permissions, events };
}

const ask = (permissions: PermissionRequests) =>
  permissions.ask("c", {
    requestId: "control-1",
    toolName: "Bash",
    input: { command: "ls" },
    toolUseId: undefined,
    raw: {},
  });

describe("permission requests in PostgreSQL", () => {
  it("applies a person's answer that got to the database before the owner's timeout", async () => {
    const { ledger, permissions, events } = await owner(1500);
    const decision = ask(permissions);
    const [request] = await waitFor(async () => {
      const pending = await ledger.pending("c");
      return pending.length > 0 ? pending : undefined;
    }, "the stored request");
    // Another worker's answer; its wake-up is never heard here (nothing listens).
    expect(await ledger.answer("c", request!.id, "allow", undefined)).toMatchObject({
      status: "answered",
      owner: "owner",
    });
    expect(await decision).toEqual({ behavior: "allow" });
    expect(events.filter((event) => event.type === "permission_resolved")).toEqual([
      expect.objectContaining({ requestId: request!.id, decision: "allow", resolvedBy: "person" }),
    ]);
    expect(await ledger.answer("c", request!.id, "deny", "late")).toEqual({
      status: "already_decided",
      decision: "allow",
    });
  });

  it("refuses a person's answer once the owner settled the request itself", async () => {
    const { ledger, permissions } = await owner(60_000);
    const decision = ask(permissions);
    const [request] = await waitFor(async () => {
      const pending = await ledger.pending("c");
      return pending.length > 0 ? pending : undefined;
    }, "the stored request");
    permissions.expire("c", "the turn ended before anyone answered");
    expect(await decision).toMatchObject({ behavior: "deny" });
    expect(await ledger.answer("c", request!.id, "allow", undefined)).toEqual({
      status: "already_decided",
      decision: "deny",
    });
    expect(await ledger.pending("c")).toEqual([]);
    expect(await permissions.list("c")).toEqual([]);
  });
});
