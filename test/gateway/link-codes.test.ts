import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LINK_CODE_TTL_MS, LinkCodes } from "../../src/gateway/http/link-codes.js";
import { startTestGateway, type TestGateway } from "./helpers.js";

describe("link codes", () => {
  it("are traded once, within ten minutes", async () => {
    let now = 1_000_000;
    const codes = new LinkCodes("the-token", { now: () => now });
    expect(LINK_CODE_TTL_MS).toBe(600_000);
    const first = codes.issue();
    expect(first.expiresAt).toBe(new Date(now + 600_000).toISOString());
    expect(await codes.redeem(first.code)).toBe(true);
    expect(await codes.redeem(first.code)).toBe(false);
    const late = codes.issue();
    now += 600_000;
    expect(await codes.redeem(late.code)).toBe(false);
    const fresh = codes.issue();
    now += 599_999;
    expect(await codes.redeem(fresh.code)).toBe(true);
    expect(await codes.redeem("made-up")).toBe(false);
  });

  it("are checked by their signature: another gateway's token, or an edited expiry, fails", async () => {
    let now = 1_000_000;
    const ours = new LinkCodes("the-token", { now: () => now });
    const theirs = new LinkCodes("another-token", { now: () => now });
    expect(await ours.redeem(theirs.issue().code)).toBe(false);
    // A later expiry written into a code that has expired does not revive it.
    const code = ours.issue().code;
    now += 700_000;
    const [, nonce, signature] = code.split(".");
    const extended = `${(now + 600_000).toString(36)}.${nonce}.${signature}`;
    expect(await ours.redeem(extended)).toBe(false);
    expect(await ours.redeem(code)).toBe(false);
    // The same token signs alike wherever it is held: a second gateway on it checks the code.
    const twin = new LinkCodes("the-token", { now: () => now });
    expect(await twin.redeem(ours.issue().code)).toBe(true);
  });

  it("leave which codes were traded to `spend` (the shared store with several workers)", async () => {
    const spent = new Set<string>();
    const spend = async (nonce: string) => !spent.has(nonce) && Boolean(spent.add(nonce));
    const one = new LinkCodes("the-token", { spend });
    const two = new LinkCodes("the-token", { spend });
    const { code } = one.issue();
    expect(await two.redeem(code)).toBe(true);
    expect(await one.redeem(code)).toBe(false);
    expect(spent.size).toBe(1);
  });
});

describe("the page's link over HTTP", () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ prefix: "link" });
  });
  afterAll(async () => {
    await gateway.cleanup();
  });

  const redeem = async (code: string) => {
    const response = await fetch(`${gateway.url}/api/link-codes/redeem`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, string> };
  };

  it("trades the printed link's code for the token once, then refuses it", async () => {
    const code = new URL(gateway.pageLink).hash.replace(/^#code=/, "");
    expect(await redeem(code)).toEqual({ status: 200, body: { token: gateway.token } });
    const again = await redeem(code);
    expect(again.status).toBe(401);
    expect(again.body.error).toContain("unknown, expired or already used");
    expect(again.body.error).toContain("rudder link");
    expect((await redeem("x".repeat(300))).status).toBe(400);
  });

  it("issues fresh codes to a holder of the token only", async () => {
    const refused = await fetch(`${gateway.url}/api/link-codes`, { method: "POST" });
    expect(refused.status).toBe(401);
    const { status, body } = await gateway.api<{ code: string; expiresAt: string }>(
      "POST",
      "/api/link-codes",
    );
    expect(status).toBe(201);
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(590_000);
    expect((await redeem(body.code)).body.token).toBe(gateway.token);
    const link = gateway.newPageLink();
    expect((await redeem(new URL(link).hash.slice(6))).status).toBe(200);
  });
});
