import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { createGatewayClient, GatewayRequestError } from "../../src/gateway/index.js";
import { waitFor } from "../helpers/wait-for.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

const gateways: TestGateway[] = [];
async function gatewayWith(options: Parameters<typeof startTestGateway>[0]) {
  const gateway = await startTestGateway(options);
  gateways.push(gateway);
  return gateway;
}
afterEach(async () => {
  for (const gateway of gateways.splice(0).reverse()) await gateway.cleanup();
});

describe("schedules", () => {
  it("are added, listed, fire into their channel through routing, and are removed", async () => {
    const gateway = await gatewayWith({ prefix: "schedule" });
    const client = createGatewayClient({ url: gateway.url, token: gateway.token });
    const schedule = await client.addSchedule({
      cron: "* * * * * *",
      channel: "cron",
      prompt: "tick",
    });
    expect(schedule).toMatchObject({
      id: expect.any(String),
      cron: "* * * * * *",
      channelId: "cron",
      prompt: "tick",
      paused: false,
      consecutiveFailures: 0,
      nextRunAt: expect.any(String),
    });
    expect((await client.listSchedules()).map((listed) => listed.id)).toEqual([schedule.id]);
    const messages = await waitFor(async () => {
      const all = await gateway.messages("cron");
      return all.some((message) => message.kind === "reply") ? all : undefined;
    }, "a scheduled prompt answered");
    expect(messages[0]).toMatchObject({ role: "user", text: "tick" });
    expect(messages.find((message) => message.kind === "reply")?.text).toContain("tick");
    const [listed] = await client.listSchedules();
    expect(listed?.lastRunAt).toEqual(expect.any(String));

    expect(await client.removeSchedule(schedule.id)).toBe(true);
    expect(await client.removeSchedule(schedule.id)).toBe(false);
    expect(await client.listSchedules()).toEqual([]);
    await expect(
      client.addSchedule({ cron: "61 * * * *", channel: "cron", prompt: "never" }),
    ).rejects.toBeInstanceOf(GatewayRequestError);
    expect(await client.sendMessage("sent", "from rudder send")).toEqual({
      id: expect.any(String),
      disposition: "started",
    });
    const withChannelId = await gateway.api<{ schedule: { channelId: string } }>(
      "POST",
      "/api/schedules",
      { cron: "0 9 * * 1-5", channelId: "weekdays", prompt: "standup" },
    );
    expect(withChannelId.status).toBe(201);
    expect(withChannelId.body.schedule.channelId).toBe("weekdays");
    const wrongToken = createGatewayClient({ url: gateway.url, token: "wrong" });
    await expect(wrongToken.listSchedules()).rejects.toMatchObject({ status: 401 });
  });

  it("pause themselves after three failures in a row, and say so in the channel", async () => {
    const gateway = await gatewayWith({ prefix: "pause", scenario: "generic_error" });
    const client = createGatewayClient({ url: gateway.url, token: gateway.token });
    const schedule = await client.addSchedule({
      cron: "* * * * * *",
      channel: "failing",
      prompt: "fail",
    });
    const paused = await waitFor(async () => {
      const [current] = await client.listSchedules();
      return current?.paused ? current : undefined;
    }, "the schedule to pause");
    expect(paused).toMatchObject({ id: schedule.id, consecutiveFailures: 3 });
    expect(paused.lastError).toContain("The agent stopped at its limit of turns");
    const messages = await gateway.messages("failing");
    const notice = messages.find((message) => message.role === "system");
    expect(notice?.text).toContain("paused itself after 3 failures");
    expect(messages.filter((message) => message.kind === "user")).toHaveLength(3);
    expect(messages.filter((message) => message.kind === "user").map((m) => m.state)).toEqual([
      "failed",
      "failed",
      "failed",
    ]);
    // The channel's kept process was started failing; the next one answers.
    gateway.setScenario("normal");
    await gateway.api("DELETE", "/api/runners/failing");
    const resumed = await client.resumeSchedule(schedule.id);
    expect(resumed).toMatchObject({ paused: false, consecutiveFailures: 0 });
    await waitFor(async () => {
      const all = await gateway.messages("failing");
      return all.some((message) => message.kind === "reply") ? all : undefined;
    }, "a reply once the resumed schedule fires");
    await client.removeSchedule(schedule.id);
    await expect(client.resumeSchedule(schedule.id)).rejects.toMatchObject({ status: 404 });
  });

  it("fire once on start for runs missed while the gateway was down", async () => {
    const gateway = await gatewayWith({ prefix: "missed" });
    const client = createGatewayClient({ url: gateway.url, token: gateway.token });
    // Yearly: it will not fire by itself during the test.
    await client.addSchedule({ cron: "0 0 0 1 1 *", channel: "missed", prompt: "catch up" });
    await gateway.close();
    const database = new Database(join(gateway.dataDir, "gateway.db"));
    database.prepare("UPDATE schedules SET next_run_at = ?").run("2020-01-01T00:00:00.000Z");
    database.close();

    const again = await startTestGateway({ prefix: "missed-again", dataDir: gateway.dataDir });
    gateways.push(again);
    const messages = await waitFor(async () => {
      const all = await again.messages("missed");
      return all.some((message) => message.kind === "reply") ? all : undefined;
    }, "the missed run answered");
    expect(messages.filter((message) => message.kind === "user")).toHaveLength(1);
    const [schedule] = await createGatewayClient({
      url: again.url,
      token: again.token,
    }).listSchedules();
    expect(Date.parse(schedule!.nextRunAt!)).toBeGreaterThan(Date.now());
  });
});
