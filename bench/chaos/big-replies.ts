/**
 * Memory bounded by bytes: `channels` channels each get a model reply of `megabytes` MB from a
 * rudder agent (the model a fake Messages API), a few at once; the gateway's resident memory
 * after a forced GC, idle, before and after, must come back within a few MiB (what it keeps per
 * channel, its event buffers and stored replies, is bounded in bytes). Idle means 30 s: V8 gives
 * back the pages a large reply took only after some idle seconds (2 s after, the committed heap
 * is still ~17 MiB up).
 */
import type { GatewayProcess } from "../gateway-process.js";
import { type Figure, figure, mib } from "./figures.js";
import { rudderGateway, settle } from "./rudder-agents.js";

/** How far above its start the idle gateway may stay, in MiB. */
const GOAL_MIB = 16;
/** How long the gateway is left idle before it is measured. */
const IDLE_MS = Number(process.env.CHAOS_IDLE_MS ?? 30_000);

async function idleStats(gateway: GatewayProcess) {
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  return gateway.stats();
}

export async function bigReplies(
  root: string,
  channels: number,
  megabytes: number,
): Promise<Figure[]> {
  const reply = `START ${"long reply. ".repeat(Math.round((megabytes * 1e6) / 12))} END`;
  const setup = await rudderGateway(root, "big-replies", [
    { text: "warm" },
    ...Array.from({ length: channels }, () => ({ text: reply, chunks: 64 })),
  ]);
  const scenario = `${channels} x ${megabytes} MB replies`;
  try {
    const { gateway } = setup;
    // A first small turn, so the gateway's start-up allocations are behind the baseline.
    await settle(gateway, "warm", "hello");
    const before = await idleStats(gateway);
    const states: string[] = [];
    const atOnce = 3;
    for (let first = 0; first < channels; first += atOnce) {
      const batch = Array.from(
        { length: Math.min(atOnce, channels - first) },
        (_, index) => `big-${first + index}`,
      );
      const results = await Promise.all(
        batch.map((channel) => settle(gateway, channel, "write at length", 300_000)),
      );
      states.push(...results.map((result) => result.state));
    }
    const after = await idleStats(gateway);
    const answered = states.filter((state) => state === "answered").length;
    const grown = after.rssMiB - before.rssMiB;
    return [
      figure(
        scenario,
        "answered",
        `${answered}/${channels}`,
        `${channels}/${channels}`,
        answered === channels,
      ),
      figure(
        scenario,
        "gateway RSS idle before / after (GC)",
        `${mib(before.rssMiB)} / ${mib(after.rssMiB)}`,
        `after < before + ${GOAL_MIB} MiB`,
        grown < GOAL_MIB,
      ),
      figure(
        scenario,
        "gateway JS heap (committed) / outside it, before -> after",
        `${mib(before.heapMiB)} (${mib(before.heapTotalMiB)}) / ${mib(before.externalMiB)} -> ${mib(after.heapMiB)} (${mib(after.heapTotalMiB)}) / ${mib(after.externalMiB)}`,
      ),
    ];
  } finally {
    await setup.close();
  }
}
