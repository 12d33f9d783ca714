/** What the tests of a database going away mid-run share (outage*.test.ts). */
import pg from "pg";
import { expect } from "vitest";
import { waitFor } from "../helpers/wait-for.js";
import { type ApiMessage, fakeLogEntries, type TestGateway } from "./helpers.js";

export type Posted = { id: string; disposition: string };
export type Runner = { channelId: string; pid: number | null; inflight: boolean };

/** `/api/runners` needs no database: it answers during an outage too. */
export async function runners(gateway: TestGateway): Promise<Runner[]> {
  return (await gateway.api<{ runners: Runner[] }>("GET", "/api/runners")).body.runners;
}

export async function runnerOf(gateway: TestGateway, channelId: string) {
  return (await runners(gateway)).find((runner) => runner.channelId === channelId);
}

/**
 * Starts a held turn (scenario `hold`) on the channel through `gateway`, its owner, and waits
 * until the agent holds it (its "holding:" text is in the shared events, so it is waiting for
 * SIGUSR2); returns the message id and the agent's pid.
 */
export async function holdTurn(gateway: TestGateway, url: string, channelId: string, text: string) {
  const posted = await gateway.api<Posted>("POST", `/api/channels/${channelId}/messages`, {
    text,
  });
  expect(posted.body.disposition).toBe("started");
  await waitFor(async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query(
        "SELECT 1 FROM events WHERE channel_id = $1 AND event::text LIKE '%holding:%'",
        [channelId],
      );
      return rows.length > 0;
    } finally {
      await client.end();
    }
  }, `the agent of ${channelId} to hold its turn`);
  const runner = await runnerOf(gateway, channelId);
  expect(runner?.inflight).toBe(true);
  return { id: posted.body.id, pid: runner!.pid! };
}

/** Ends the held turn in the agent (while the database is away its answer waits in memory). */
export async function endHeldTurn(gateway: TestGateway, channelId: string, pid: number) {
  process.kill(pid, "SIGUSR2");
  await waitFor(
    async () => (await runnerOf(gateway, channelId))?.inflight === false,
    `the turn of ${channelId} to end`,
  );
}

export async function healthy(gateway: TestGateway): Promise<void> {
  await waitFor(
    async () => (await fetch(`${gateway.url}/api/health`)).status === 200,
    "the worker to reach the database again",
    30_000,
  );
}

/** The channel's messages once every user message is answered, each exactly once. */
export async function answeredOnce(gateway: TestGateway, channelId: string): Promise<ApiMessage[]> {
  // What the channel held at the last look, named when the wait fails: which message was left.
  let seen = "nothing yet";
  const messages = await waitFor(
    async () => {
      const { status, body } = await gateway.api<{ messages: ApiMessage[] }>(
        "GET",
        `/api/channels/${channelId}/messages`,
      );
      if (status !== 200) {
        seen = `status ${status}`;
        return undefined;
      }
      seen = body.messages.map((m) => `${m.kind} ${JSON.stringify(m.text)} ${m.state}`).join("; ");
      const users = body.messages.filter((message) => message.kind === "user");
      return users.length > 0 && users.every((message) => message.state === "answered")
        ? body.messages
        : undefined;
    },
    `every message of ${channelId} answered`,
    // Under the test's own 60 s, so that a wait that fails says what it saw.
    40_000,
  ).catch((error: Error) => {
    throw new Error(`${error.message} (last seen: ${seen})`);
  });
  for (const user of messages.filter((message) => message.kind === "user")) {
    expect(messages.filter((message) => message.replyTo === user.id)).toHaveLength(1);
  }
  return messages;
}

/** How many prompts containing `text` the fake agents of `gateway` were given. */
export function promptsWith(gateway: TestGateway, text: string): number {
  return fakeLogEntries(gateway.fakeLog).filter(
    (entry) => entry.event === "stdin" && JSON.stringify(entry.message ?? "").includes(text),
  ).length;
}

/** The lines of `lines` saying the store was lost, and back. */
export function outageLines(lines: string[]): { lost: string[]; back: string[] } {
  return {
    lost: lines.filter((line) => line.includes("store unavailable")),
    back: lines.filter((line) => line.includes("store back")),
  };
}
