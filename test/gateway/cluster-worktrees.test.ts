/**
 * A channel's worktree across two gateway workers on one PostgreSQL (one machine, the same
 * worktree root, each worker its own data folder): the worktree a channel's first owner made
 * is the one its next owner works in after the lease moved, uncommitted change and all; and a
 * channel's removal sent to the worker that does not hold it is refused, naming the holder.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FAKE_CLAUDE_SWITCH } from "../helpers/fixtures.js";
import { waitFor } from "../helpers/wait-for.js";
import { clusterFixture } from "./cluster-fixture.js";
import type { TestGateway } from "./helpers.js";
import { gitIn, isolatedWorktreeBindings } from "./worktree-fixture.js";

const root = mkdtempSync(join(tmpdir(), "rudder-cluster-worktrees-"));
const repository = join(root, "project");
const cluster = clusterFixture("cluster-worktrees", {
  engine: { claudeBin: FAKE_CLAUDE_SWITCH, cwd: repository },
  bindings: isolatedWorktreeBindings(repository, "5e1f0a7d9c3b2a41"),
  worktreeRoot: join(root, "worktrees"),
});

const git = (...args: string[]) => gitIn(repository, ...args);

beforeAll(() => {
  mkdirSync(repository);
  git("init", "-q", "-b", "main");
  writeFileSync(join(repository, "notes.txt"), "original\n");
  git("add", ".");
  git("commit", "-qm", "first");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Sends `text` through `gateway` and resolves with the channel's next answer's text. */
async function ask(gateway: TestGateway, channelId: string, text: string): Promise<string> {
  const before = (await gateway.messages(channelId)).length;
  await gateway.api("POST", `/api/channels/${channelId}/messages`, { text });
  const answer = await waitFor(
    async () =>
      (await gateway.messages(channelId)).slice(before).find((message) => message.role !== "user"),
    `an answer in ${channelId}`,
    30_000,
  );
  return answer.text;
}

it("keeps a channel's worktree when its lease moves to another worker", async () => {
  const url = await cluster.createDatabase();
  const first = await cluster.worker(url, "first");
  const second = await cluster.worker(url, "second");
  expect(await ask(first, "web:moving", "file-edit notes.txt moved")).toContain(
    "file notes.txt: moved",
  );
  // Held by the first worker: the second refuses to remove it, naming the holder.
  const refused = await second.api<{ error: string }>("DELETE", "/api/channels/web:moving");
  expect(refused.status).toBe(409);
  expect(refused.body.error).toMatch(/^channel web:moving is driven by worker first/);

  // The first stops (its leases released): the second takes the channel, in the same worktree.
  await first.close();
  cluster.gateways.splice(cluster.gateways.indexOf(first), 1);
  const shown = await ask(second, "web:moving", "file-show notes.txt");
  expect(shown).toContain("file notes.txt: moved");
  expect(shown).toContain(join(root, "worktrees"));
});
