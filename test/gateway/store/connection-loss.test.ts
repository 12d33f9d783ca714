import { describe, expect, it } from "vitest";
import { Backoff } from "../../../src/gateway/store/backoff.js";
import { connectionFailure } from "../../../src/gateway/store/postgres/connection-failure.js";

describe("the backoff between attempts to reach the database", () => {
  it("doubles up to its cap, each delay between half and all of its step, and resets", () => {
    const steps = [250, 500, 1000, 2000, 4000, 5000, 5000];
    for (let round = 0; round < 50; round++) {
      const backoff = new Backoff(250, 5000);
      for (const step of steps) {
        const delay = backoff.next();
        expect(delay).toBeGreaterThanOrEqual(step / 2);
        expect(delay).toBeLessThanOrEqual(step);
      }
      expect(backoff.nextAtMostSeconds()).toBe(5);
      backoff.reset();
      expect(backoff.next()).toBeLessThanOrEqual(250);
    }
    // Jittered: workers that lost the database together do not retry in step.
    const first = new Set(Array.from({ length: 20 }, () => new Backoff(1000, 5000).next()));
    expect(first.size).toBeGreaterThan(1);
  });
});

describe("which failures mean the database is out of reach", () => {
  const failure = (message: string, code?: string, cause?: unknown) =>
    Object.assign(new Error(message, cause === undefined ? {} : { cause }), code ? { code } : {});

  it("names socket, server-shutdown and driver failures, and nothing else", () => {
    expect(connectionFailure(failure("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED"))).toBe(
      "connection refused",
    );
    expect(
      connectionFailure(failure("terminating connection due to administrator command", "57P01")),
    ).toBe("connection lost (the server shut down)");
    expect(connectionFailure(failure("the database system is shutting down", "57P03"))).toMatch(
      /^connection refused/,
    );
    expect(connectionFailure(failure("Connection terminated unexpectedly"))).toBe(
      "connection lost",
    );
    expect(
      connectionFailure(
        failure("Connection terminated due to connection timeout", undefined, new Error("x")),
      ),
    ).toBe("connection timed out");
    expect(connectionFailure(failure("timeout exceeded when trying to connect"))).toBe(
      "connection timed out",
    );
    expect(connectionFailure(failure("Query read timeout"))).toMatch(/^connection timed out/);
    expect(connectionFailure(failure("wrapped", undefined, failure("x", "ECONNRESET")))).toBe(
      "connection lost",
    );
    // A statement the server refused, or a bug: not an outage (a 500, not a 503).
    expect(connectionFailure(failure('relation "nope" does not exist', "42P01"))).toBeNull();
    expect(connectionFailure(failure("duplicate key value", "23505"))).toBeNull();
    expect(connectionFailure("not an error")).toBeNull();
  });
});
