/**
 * Schedules across three gateway workers on one PostgreSQL: one created through a worker is
 * armed on every worker at once (NOTIFY), each firing is claimed by one of them, and one
 * deleted through another worker stops firing everywhere.
 */
import { expect, it } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { clusterFixture } from "./cluster-fixture.js";
import type { ApiMessage } from "./helpers.js";

const { createDatabase, worker, gateways } = clusterFixture("cluster-schedules");

const firings = (messages: ApiMessage[]) =>
  messages.filter((message) => message.kind === "user" && message.text === "tick");
const isTock = (message: ApiMessage) => message.kind === "user" && message.text === "tock";

it("arms a schedule made on one worker on all, fires each firing once, and deletes it everywhere", async () => {
  const url = await createDatabase();
  const [a, b, c] = await Promise.all([
    worker(url, "sched-a"),
    worker(url, "sched-b"),
    worker(url, "sched-c"),
  ]);
  // Every two seconds: all three workers started before it existed.
  const created = await a.api<{ schedule: { id: string } }>("POST", "/api/schedules", {
    cron: "*/2 * * * * *",
    channel: "ticking",
    prompt: "tick",
  });
  expect(created.status).toBe(201);
  const createdAt = Date.now();
  const scheduleId = created.body.schedule.id;
  await waitFor(
    async () => firings(await b.messages("ticking")).length >= 2,
    "two firings with every worker up",
    30_000,
  );

  // Its creator stops: the others armed it when told, so it keeps firing.
  await a.cleanup();
  gateways.splice(gateways.indexOf(a), 1);
  const beforeStop = firings(await b.messages("ticking")).length;
  await waitFor(
    async () => firings(await c.messages("ticking")).length >= beforeStop + 2,
    "two more firings after its creator stopped",
    30_000,
  );

  const deleted = await b.api("DELETE", `/api/schedules/${scheduleId}`);
  expect(deleted.status).toBe(200);
  const deletedAt = Date.now();
  // A control schedule made after the delete: each of its firings shows the workers passing a
  // period boundary, at which worker C (which did not delete the first) would fire the deleted
  // one had it stayed armed there. Counted at the control's first firing (a firing claimed just
  // before the delete is in by then) and again two boundaries later, instead of fixed waits.
  const control = await b.api("POST", "/api/schedules", {
    cron: "*/2 * * * * *",
    channel: "control",
    prompt: "tock",
  });
  expect(control.status).toBe(201);
  const controlFirings = (count: number) =>
    waitFor(
      async () => (await c.messages("control")).filter(isTock).length >= count,
      `${count} firings of the control schedule`,
      30_000,
    );
  await controlFirings(1);
  const atDelete = firings(await c.messages("ticking")).length;
  await controlFirings(3);
  const controlId = (control.body as { schedule: { id: string } }).schedule.id;
  expect((await b.api("DELETE", `/api/schedules/${controlId}`)).status).toBe(200);
  const messages = await c.messages("ticking");
  expect(firings(messages)).toHaveLength(atDelete);
  expect((await c.api<{ schedules: unknown[] }>("GET", "/api/schedules")).body.schedules).toEqual(
    [],
  );

  // Once per firing: at most one every two seconds while it existed (fired by each worker that
  // armed it, there would be up to three times as many; a late firing only makes fewer).
  expect(atDelete).toBeLessThanOrEqual(Math.floor((deletedAt - createdAt) / 2000) + 1);
  // Every firing was answered, once.
  await waitFor(
    async () =>
      firings(await c.messages("ticking")).every((message) => message.state === "answered"),
    "every firing answered",
    30_000,
  );
  const replies = (await c.messages("ticking")).filter((message) => message.kind === "reply");
  expect(new Set(replies.map((reply) => reply.replyTo)).size).toBe(replies.length);
  expect(replies).toHaveLength(atDelete);
}, 120_000);
