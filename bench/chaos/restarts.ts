/**
 * Messages posted every 20 ms over several channels while the gateway is SIGKILLed and
 * started again on the same data, `kills` times (one message is sent while it is down). Counts, per message: sent, accepted (202),
 * answered exactly once, lost (accepted, never answered), answered twice; how close any message
 * came to the caps that give up on a poison message (`DeliveryCaps`: runs that handed it over,
 * runs whose agent started on it); how many messages an agent answered again after a kill
 * (work redone); and the agents (fake Claude CLIs, each a 0.4 s turn) still alive after the last
 * restart has answered everything.
 */
import { join } from "node:path";
import { type ApiMessage, fakeLogEntries } from "../../test/gateway/helpers.js";
import { isAlive } from "../../test/helpers/process-state.js";
import { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure, poll } from "./figures.js";

const FAKE_CLAUDE = join(import.meta.dirname, "..", "..", "test", "fixtures", "fake-claude");

export interface RestartOptions {
  root: string;
  messages: number;
  channels: number;
  kills: number;
}

export async function restarts(options: RestartOptions): Promise<Figure[]> {
  const dataDir = join(options.root, "restarts");
  const fakeLog = join(options.root, "restarts-fake.log");
  const start = () =>
    GatewayProcess.start({
      dataDir,
      port: 0,
      engine: {
        claudeBin: FAKE_CLAUDE,
        env: { FAKE_CLAUDE_LOG: fakeLog, FAKE_CLAUDE_REPLY_DELAY_MS: "400" },
      },
    });
  let gateway = await start();
  const texts = Array.from({ length: options.messages }, (_, index) => ({
    channel: `chaos-${index % options.channels}`,
    text: `message m${String(index).padStart(5, "0")}.`,
  }));
  let sent = 0;
  let accepted = 0;
  const acceptedTexts: typeof texts = [];
  const post = async (message: (typeof texts)[number]) => {
    sent += 1;
    try {
      const answer = await gateway.api("POST", `/api/channels/${message.channel}/messages`, {
        text: message.text,
      });
      if (answer.status !== 202) return;
      accepted += 1;
      acceptedTexts.push(message);
    } catch {
      // The gateway was down: the client saw the failure, so nothing was promised.
    }
  };
  const step = Math.ceil(options.messages / (options.kills + 1));
  for (const [index, message] of texts.entries()) {
    if (index > 0 && index % step === 0) {
      // Turns of the last messages are in flight (each takes 0.4 s) when the gateway dies.
      await gateway.kill();
      await post(message);
      gateway = await start();
      continue;
    }
    await post(message);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const all = async () => {
    const messages: ApiMessage[] = [];
    for (let index = 0; index < options.channels; index += 1) {
      const { body } = await gateway.api<{ messages: ApiMessage[] }>(
        "GET",
        `/api/channels/chaos-${index}/messages`,
      );
      messages.push(...body.messages);
    }
    return messages;
  };
  const settled = await poll(async () => {
    const messages = await all();
    const users = messages.filter((message) => message.kind === "user");
    return users.length >= accepted &&
      users.every((message) => message.state === "answered" || message.state === "failed")
      ? messages
      : undefined;
  }, 120_000);
  const messages = settled ?? (await all());
  const replies = messages.filter((message) => message.kind === "reply");
  let once = 0;
  let twice = 0;
  let lost = 0;
  for (const message of acceptedTexts) {
    const count = replies.filter((reply) => reply.text.includes(message.text)).length;
    if (count === 1) once += 1;
    else if (count > 1) twice += 1;
    else lost += 1;
  }
  const failed = messages.filter((message) => message.kind === "error").length;
  const users = messages.filter((message) => message.kind === "user");
  const most = (count: (message: ApiMessage) => number) => Math.max(0, ...users.map(count));
  const running = async () =>
    new Set(
      (await gateway.api<{ runners: { pid: number }[] }>("GET", "/api/runners")).body.runners.map(
        (runner) => runner.pid,
      ),
    );
  const orphansAlive = async () => {
    const live = await running();
    return fakeLogEntries(fakeLog)
      .filter((entry) => entry.event === "start")
      .map((entry) => entry.pid as number)
      .filter((pid) => !live.has(pid) && isAlive(pid));
  };
  // The agents of a killed gateway get SIGTERM as it dies (their parent-death signal): wait
  // for them to be gone, up to 10 s; any still alive then are counted below.
  await poll(async () => (await orphansAlive()).length === 0, 10_000);
  const entries = fakeLogEntries(fakeLog);
  // How often an agent answered each message: more than once is work a kill made it redo.
  const textOf = new Map<string, string>();
  const answers = new Map<string, number>();
  for (const entry of entries) {
    const line = entry.message as { type?: string; uuid?: string; message?: unknown } | undefined;
    if (entry.event === "stdin" && line?.type === "user" && line.uuid !== undefined) {
      const text = /message m\d{5}\./.exec(JSON.stringify(line.message ?? ""))?.[0];
      if (text !== undefined) textOf.set(line.uuid, text);
    }
    if (entry.event !== "result") continue;
    for (const uuid of entry.uuids as string[]) {
      const text = textOf.get(uuid);
      if (text !== undefined) answers.set(text, (answers.get(text) ?? 0) + 1);
    }
  }
  const redone = acceptedTexts.filter((message) => (answers.get(message.text) ?? 0) > 1).length;
  const orphans = (await orphansAlive()).length;
  await gateway.stop();
  const scenario = `${options.kills} gateway SIGKILLs`;
  return [
    figure(scenario, `messages sent over ${options.channels} channels`, sent),
    figure(scenario, "accepted (202)", accepted),
    figure(scenario, "answered once", once, "= accepted", once === accepted),
    figure(scenario, "lost", lost, "0", lost === 0),
    figure(scenario, "answered twice", twice, "0", twice === 0),
    figure(scenario, "failed (error shown)", failed, "0", failed === 0),
    figure(
      scenario,
      "most runs one message was handed over in",
      most((m) => m.deliveries),
      "< 20",
    ),
    figure(
      scenario,
      "most runs an agent started on one message",
      most((m) => m.attempts),
      "< 5",
    ),
    figure(
      scenario,
      "messages an agent answered again after a kill",
      redone,
      `< ${options.kills * 4}`,
      redone < options.kills * 4,
    ),
    figure(scenario, "agents of killed gateways left alive", orphans, "0", orphans === 0),
  ];
}
