/**
 * A lease renewal answered late (after a third of a lease) is asked for again at once, and the
 * second answer is the one a worker acts on: the first confirms its leases only from when it was
 * asked, so a channel regained on it lapsed before the next renewal and its replayed turn was
 * stopped (outage.test.ts "hung question": the model asked three times). The clock is moved by
 * the fake leases' renewals themselves.
 */
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { LeaseConfirmations } from "../../src/gateway/cluster/lease-confirmations.js";
import type { WorkerLeases } from "../../src/gateway/store/shared-store.js";

const LEASE_SECONDS = 3;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
});

afterEach(() => {
  vi.useRealTimers();
});

/** Leases whose renewals each take `took[i]` ms of the clock and answer `answers[i]`. */
function leases(took: number[], answers: string[][]) {
  const asked: number[] = [];
  const renew = async () => {
    const index = asked.length;
    asked.push(Date.now());
    vi.setSystemTime(Date.now() + (took[index] ?? 0));
    return answers[index] ?? [];
  };
  return { leases: { renew } as unknown as WorkerLeases, asked };
}

it("asks a renewal answered after a third of a lease again at once, and returns that answer", async () => {
  const confirmations = new LeaseConfirmations(LEASE_SECONDS);
  const { leases: slow, asked } = leases([1_400, 20], [["hung"], ["hung", "other"]]);
  const late: number[] = [];
  const renewal = await confirmations.renew(slow, (at) => late.push(at));
  expect(asked).toHaveLength(2);
  expect(late).toEqual([asked[0]]);
  expect(renewal).toMatchObject({ asked: asked[1], renewed: ["hung", "other"] });
});

it("asks a renewal answered within a third of a lease once", async () => {
  const confirmations = new LeaseConfirmations(LEASE_SECONDS);
  const { leases: quick, asked } = leases([900], [["hung"]]);
  const late: number[] = [];
  const renewal = await confirmations.renew(quick, (at) => late.push(at));
  expect(asked).toHaveLength(1);
  expect(late).toEqual([]);
  expect(renewal).toMatchObject({ asked: asked[0], renewed: ["hung"] });
});
